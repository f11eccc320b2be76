#include "CPNGReader.h"
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ic_png_reader {
    png_structp png;
    png_infop info;
    const unsigned char *data;
    size_t size;
    size_t offset;
    unsigned int height;
    int passes;
    int failed;
    jmp_buf jump;
    char message[160];
};

static void ic_read(png_structp png, png_bytep out, size_t length) {
    ic_png_reader *reader = (ic_png_reader *)png_get_io_ptr(png);
    if (length > reader->size - reader->offset) png_error(png, "read beyond end of data");
    memcpy(out, reader->data + reader->offset, length);
    reader->offset += length;
}

static void ic_error(png_structp png, png_const_charp message) {
    ic_png_reader *reader = (ic_png_reader *)png_get_error_ptr(png);
    snprintf(reader->message, sizeof reader->message, "%s", message);
    longjmp(reader->jump, 1);
}

// Warnings (a bad ancillary CRC, an out-of-place chunk) never touch a pixel: kept silent.
static void ic_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

ic_png_reader *ic_png_reader_create(const void *data, size_t size) {
    ic_png_reader *reader = calloc(1, sizeof *reader);
    if (reader == NULL) return NULL;
    reader->data = data;
    reader->size = size;
    if (setjmp(reader->jump)) {
        ic_png_reader_destroy(reader);
        return NULL;
    }
    reader->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, reader, ic_error, ic_warning);
    if (reader->png == NULL) {
        free(reader);
        return NULL;
    }
    reader->info = png_create_info_struct(reader->png);
    if (reader->info == NULL) {
        ic_png_reader_destroy(reader);
        return NULL;
    }
    png_set_read_fn(reader->png, reader, ic_read);
    return reader;
}

void ic_png_reader_destroy(ic_png_reader *reader) {
    if (reader == NULL) return;
    if (reader->png != NULL) png_destroy_read_struct(&reader->png, reader->info ? &reader->info : NULL, NULL);
    free(reader);
}

int ic_png_read_info(ic_png_reader *reader, ic_png_info *info) {
    if (reader->failed) return 0;
    if (setjmp(reader->jump)) {
        reader->failed = 1;
        return 0;
    }
    png_structp png = reader->png;
    png_read_info(png, reader->info);
    int colorType = png_get_color_type(png, reader->info);
    int bitDepth = png_get_bit_depth(png, reader->info);
    int transparency = png_get_valid(png, reader->info, PNG_INFO_tRNS) != 0;
    int alpha = (colorType & PNG_COLOR_MASK_ALPHA) != 0 || transparency;
    int grey = (colorType & PNG_COLOR_MASK_COLOR) == 0;
    if (colorType == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (grey && bitDepth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (transparency) png_set_tRNS_to_alpha(png);
    if (bitDepth == 16) png_set_scale_16(png);
    if (grey && alpha) png_set_gray_to_rgb(png);
    // Output sRGB; a file without gAMA/sRGB is taken to be sRGB already (no conversion).
    png_set_alpha_mode(png, PNG_ALPHA_PNG, PNG_DEFAULT_sRGB);
    reader->passes = png_set_interlace_handling(png);
    png_read_update_info(png, reader->info);
    info->width = png_get_image_width(png, reader->info);
    info->height = png_get_image_height(png, reader->info);
    info->channels = png_get_channels(png, reader->info);
    info->interlaced = reader->passes > 1;
    reader->height = info->height;
    if (png_get_bit_depth(png, reader->info) != 8
        || png_get_rowbytes(png, reader->info) != (size_t)info->width * info->channels
        || (info->channels != 1 && info->channels != 3 && info->channels != 4)) {
        snprintf(reader->message, sizeof reader->message, "unexpected output layout");
        reader->failed = 1;
        return 0;
    }
    return 1;
}

int ic_png_read_rows(ic_png_reader *reader, unsigned char *rows, unsigned int count, size_t rowBytes) {
    if (reader->failed) return 0;
    if (setjmp(reader->jump)) {
        reader->failed = 1;
        return 0;
    }
    for (unsigned int index = 0; index < count; index++) {
        png_read_row(reader->png, rows + (size_t)index * rowBytes, NULL);
    }
    return 1;
}

int ic_png_read_image(ic_png_reader *reader, unsigned char *image, size_t rowBytes) {
    if (reader->failed) return 0;
    if (setjmp(reader->jump)) {
        reader->failed = 1;
        return 0;
    }
    // Each Adam7 pass merges its pixels into the rows, which are complete after the last one.
    for (int pass = 0; pass < reader->passes; pass++) {
        for (unsigned int y = 0; y < reader->height; y++) {
            png_read_row(reader->png, image + (size_t)y * rowBytes, NULL);
        }
    }
    return 1;
}

const char *ic_png_reader_message(const ic_png_reader *reader) {
    return reader->message;
}
