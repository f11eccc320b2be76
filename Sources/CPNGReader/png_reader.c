#include "CPNGReader.h"
#include <png.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

// Where libpng's error function jumps, and the message it leaves (the error pointer of both
// the pull reader and the progressive stream).
struct ic_png_failure {
    jmp_buf jump;
    char message[160];
};

static void ic_error(png_structp png, png_const_charp message);
static void ic_warning(png_structp png, png_const_charp message);

// libpng's heap, counted and capped per reader. libpng sizes some buffers by what a chunk
// declares: a 57-byte file declaring a 1 GiB tEXt chunk made it allocate and zero 1 GiB (its
// chunk-size check is a "benign" error, which reading turns into a warning). Every allocation
// goes through `ic_heap_malloc`, which refuses what would pass `limit`: the chunk is then
// skipped with a warning (metadata) or the read fails (rows), never the process.
struct ic_png_heap {
    size_t inUse;
    size_t peak;
    size_t limit;
};

// Each block carries its size in front, so that frees can be counted.
typedef union {
    size_t size;
    max_align_t alignment;
} ic_heap_block;

static png_voidp ic_heap_malloc(png_structp png, png_alloc_size_t size) {
    struct ic_png_heap *heap = (struct ic_png_heap *)png_get_mem_ptr(png);
    if (size > heap->limit - heap->inUse || size > SIZE_MAX - sizeof(ic_heap_block)) return NULL;
    ic_heap_block *block = malloc(sizeof(ic_heap_block) + size);
    if (block == NULL) return NULL;
    block->size = size;
    heap->inUse += size;
    if (heap->inUse > heap->peak) heap->peak = heap->inUse;
    return block + 1;
}

static void ic_heap_free(png_structp png, png_voidp pointer) {
    if (pointer == NULL) return;
    struct ic_png_heap *heap = (struct ic_png_heap *)png_get_mem_ptr(png);
    ic_heap_block *block = (ic_heap_block *)pointer - 1;
    heap->inUse -= block->size;
    free(block);
}

// Once the header is known, the heap may also hold libpng's two rows (the widest pixel libpng
// works with is 8 bytes, 16-bit RGBA) and their padding.
static void ic_heap_allow_rows(struct ic_png_heap *heap, png_uint_32 width) {
    heap->limit = IC_PNG_METADATA_HEAP + 2 * ((size_t)width * 8 + 128);
}

// Ancillary chunks neither reader uses are skipped unread (libpng reads through them without
// keeping them): text, time, physical size, sample depths, the background, histograms,
// suggested palettes, eXIf, and unknown ancillary chunks. Kept: tRNS (transparency) and what
// the colour conversion reads (gAMA, cHRM, sRGB, iCCP).
static void ic_png_skip_unused_chunks(png_structp png) {
    static const png_byte used[] = { 't', 'R', 'N', 'S', '\0', 'g', 'A', 'M', 'A', '\0', 'c', 'H', 'R', 'M', '\0',
                                     's', 'R', 'G', 'B', '\0', 'i', 'C', 'C', 'P', '\0' };
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_AS_DEFAULT, used, (int)(sizeof used / 5));
}

// A read structure over a counted heap with the chunk handling above.
static png_structp ic_png_create(struct ic_png_failure *failure, struct ic_png_heap *heap) {
    heap->limit = IC_PNG_METADATA_HEAP;
    png_structp png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, failure, ic_error, ic_warning,
                                               heap, ic_heap_malloc, ic_heap_free);
    if (png != NULL) ic_png_skip_unused_chunks(png);
    return png;
}

struct ic_png_reader {
    png_structp png;
    png_infop info;
    const unsigned char *data;
    size_t size;
    size_t offset;
    unsigned int height;
    int passes;
    int failed;
    /// Rows holding image data (each Adam7 pass's reduced rows), and those libpng has decoded.
    unsigned long long rowsExpected;
    unsigned long long rowsDecoded;
    /// 1 once libpng, finishing the image data, asked for the next chunk's header: stopped there.
    int imageDataEnded;
    struct ic_png_failure failure;
    struct ic_png_heap heap;
};

// Rows libpng delivers: the image's rows, or each Adam7 pass's rows for passes with columns.
static unsigned long long ic_rows_expected(unsigned int width, unsigned int height, int passes) {
    if (passes == 1) return height;
    unsigned long long rows = 0;
    for (int pass = 0; pass < 7; pass++) {
        if (PNG_PASS_COLS(width, pass) > 0) rows += PNG_PASS_ROWS(height, pass);
    }
    return rows;
}

// libpng's user transform: called once per row that holds image data, after the row is
// inflated and before libpng finishes it, so it counts rows whose data has been read.
static void ic_row_decoded(png_structp png, png_row_infop row, png_bytep data) {
    (void)row;
    (void)data;
    ic_png_reader *reader = (ic_png_reader *)png_get_io_ptr(png);
    reader->rowsDecoded += 1;
}

// After the last row, libpng reads on to the end of the zlib stream: to the rest of the chunk
// that row ended in (its CRC included), and, when the stream has not ended there, into the
// next chunk. Nothing in that chunk is a pixel, and the progressive stream is never given it
// (`StreamingPNGVerifier`): the reader stops where the next chunk's header would be read, so
// both verdicts cover the same bytes.
static void ic_read(png_structp png, png_bytep out, size_t length) {
    ic_png_reader *reader = (ic_png_reader *)png_get_io_ptr(png);
    if (reader->rowsExpected > 0 && reader->rowsDecoded >= reader->rowsExpected
        && (png_get_io_state(png) & PNG_IO_MASK_LOC) == PNG_IO_CHUNK_HDR) {
        reader->imageDataEnded = 1;
        longjmp(reader->failure.jump, 1);
    }
    if (length > reader->size - reader->offset) png_error(png, "read beyond end of data");
    memcpy(out, reader->data + reader->offset, length);
    reader->offset += length;
    // A PLTE longer than any palette is refused at its header, as the progressive stream's
    // feeder refuses it (`StreamingPNGVerifier`): libpng would skip it in an image without a
    // palette, but its progressive reader first buffers a chunk whole, whatever its length.
    if (length == 8 && (png_get_io_state(png) & PNG_IO_MASK_LOC) == PNG_IO_CHUNK_HDR
        && memcmp(out + 4, "PLTE", 4) == 0) {
        png_uint_32 declared = png_get_uint_32(out);
        if (declared > 3 * PNG_MAX_PALETTE_LENGTH) png_error(png, "PLTE: invalid");
    }
}

static void ic_error(png_structp png, png_const_charp message) {
    struct ic_png_failure *failure = (struct ic_png_failure *)png_get_error_ptr(png);
    snprintf(failure->message, sizeof failure->message, "%s", message);
    longjmp(failure->jump, 1);
}

// Warnings (a bad ancillary CRC, an out-of-place chunk) never touch a pixel: kept silent.
static void ic_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

// The output layout both readers produce, set once the header is read: 8-bit grey, RGB or
// RGBA, sRGB-encoded. `interlaceHandling` merges Adam7 passes into full rows (the pull reader);
// the progressive stream only counts rows and takes each pass's rows as they come.
// 1 on success; 0 with a message when libpng's layout is not the expected one.
static int ic_png_configure(png_structp png, png_infop pngInfo, int interlaceHandling, ic_png_info *info,
                            int *passes, struct ic_png_failure *failure) {
    int colorType = png_get_color_type(png, pngInfo);
    int bitDepth = png_get_bit_depth(png, pngInfo);
    int transparency = png_get_valid(png, pngInfo, PNG_INFO_tRNS) != 0;
    int alpha = (colorType & PNG_COLOR_MASK_ALPHA) != 0 || transparency;
    int grey = (colorType & PNG_COLOR_MASK_COLOR) == 0;
    if (colorType == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (grey && bitDepth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (transparency) png_set_tRNS_to_alpha(png);
    if (bitDepth == 16) png_set_scale_16(png);
    if (grey && alpha) png_set_gray_to_rgb(png);
    // An image that declares its colours is converted by the caller through its profile, so
    // its samples come out as stored; otherwise output sRGB (gAMA honoured), and a file
    // without gAMA/sRGB is taken to be sRGB already (no conversion).
    int tagged = png_get_valid(png, pngInfo, PNG_INFO_iCCP) != 0
        || (png_get_valid(png, pngInfo, PNG_INFO_cHRM) != 0 && png_get_valid(png, pngInfo, PNG_INFO_sRGB) == 0);
    if (!tagged) png_set_alpha_mode(png, PNG_ALPHA_PNG, PNG_DEFAULT_sRGB);
    info->colourTagged = tagged;
    *passes = interlaceHandling ? png_set_interlace_handling(png)
        : (png_get_interlace_type(png, pngInfo) == PNG_INTERLACE_ADAM7 ? 7 : 1);
    png_read_update_info(png, pngInfo);
    info->width = png_get_image_width(png, pngInfo);
    info->height = png_get_image_height(png, pngInfo);
    info->channels = png_get_channels(png, pngInfo);
    info->interlaced = *passes > 1;
    if (png_get_bit_depth(png, pngInfo) != 8
        || png_get_rowbytes(png, pngInfo) != (size_t)info->width * info->channels
        || (info->channels != 1 && info->channels != 3 && info->channels != 4)) {
        snprintf(failure->message, sizeof failure->message, "unexpected output layout");
        return 0;
    }
    return 1;
}

ic_png_reader *ic_png_reader_create(const void *data, size_t size) {
    ic_png_reader *reader = calloc(1, sizeof *reader);
    if (reader == NULL) return NULL;
    reader->data = data;
    reader->size = size;
    if (setjmp(reader->failure.jump)) {
        ic_png_reader_destroy(reader);
        return NULL;
    }
    reader->png = ic_png_create(&reader->failure, &reader->heap);
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
    if (setjmp(reader->failure.jump)) {
        reader->failed = 1;
        return 0;
    }
    png_read_info(reader->png, reader->info);
    ic_heap_allow_rows(&reader->heap, png_get_image_width(reader->png, reader->info));
    png_set_read_user_transform_fn(reader->png, ic_row_decoded);
    if (!ic_png_configure(reader->png, reader->info, 1, info, &reader->passes, &reader->failure)) {
        reader->failed = 1;
        return 0;
    }
    reader->height = info->height;
    reader->rowsExpected = ic_rows_expected(info->width, info->height, reader->passes);
    return 1;
}

int ic_png_reader_colour(ic_png_reader *reader, ic_png_colour *colour) {
    memset(colour, 0, sizeof *colour);
    if (reader->failed) return 0;
    png_structp png = reader->png;
    png_infop info = reader->info;
    int tagged = 0;
    png_charp name = NULL;
    int compression = 0;
    png_bytep profile = NULL;
    png_uint_32 length = 0;
    if (png_get_iCCP(png, info, &name, &compression, &profile, &length) != 0 && profile != NULL && length > 0) {
        colour->icc = profile;
        colour->iccLength = length;
        tagged = 1;
    }
    if (png_get_valid(png, info, PNG_INFO_cHRM) != 0 && png_get_valid(png, info, PNG_INFO_sRGB) == 0
        && png_get_cHRM(png, info, &colour->whiteX, &colour->whiteY, &colour->redX, &colour->redY,
                        &colour->greenX, &colour->greenY, &colour->blueX, &colour->blueY) != 0) {
        colour->hasPrimaries = 1;
        tagged = 1;
    }
    double gamma = 0;
    if (png_get_gAMA(png, info, &gamma) != 0) colour->gamma = gamma;
    return tagged;
}

// The jump target's verdict: the stop after the image data (`ic_read`) ends the last row's
// read; every other jump is an error. Either way libpng reads no more rows.
static int ic_rows_stopped(ic_png_reader *reader) {
    reader->failed = 1;
    if (!reader->imageDataEnded) return 0;
    snprintf(reader->failure.message, sizeof reader->failure.message, "no rows after the image data");
    return 1;
}

int ic_png_read_rows(ic_png_reader *reader, unsigned char *rows, unsigned int count, size_t rowBytes) {
    if (reader->failed) return 0;
    if (setjmp(reader->failure.jump)) return ic_rows_stopped(reader);
    for (unsigned int index = 0; index < count; index++) {
        png_read_row(reader->png, rows + (size_t)index * rowBytes, NULL);
    }
    return 1;
}

int ic_png_read_image(ic_png_reader *reader, unsigned char *image, size_t rowBytes) {
    if (reader->failed) return 0;
    if (setjmp(reader->failure.jump)) return ic_rows_stopped(reader);
    // Each Adam7 pass merges its pixels into the rows, which are complete after the last one.
    for (int pass = 0; pass < reader->passes; pass++) {
        for (unsigned int y = 0; y < reader->height; y++) {
            png_read_row(reader->png, image + (size_t)y * rowBytes, NULL);
        }
    }
    return 1;
}

const char *ic_png_reader_message(const ic_png_reader *reader) {
    return reader->failure.message;
}

size_t ic_png_reader_peak_heap(const ic_png_reader *reader) { return reader->heap.peak; }

// MARK: Progressive stream

struct ic_png_stream {
    png_structp png;
    png_infop info;
    struct ic_png_failure failure;
    ic_png_info header;
    int headerRead;
    int failed;
    int passes;
    /// Rows libpng will deliver (each Adam7 pass's reduced rows), and those delivered so far.
    unsigned long long rowsExpected;
    unsigned long long rowsSeen;
    struct ic_png_heap heap;
};

static void ic_stream_info(png_structp png, png_infop pngInfo) {
    ic_png_stream *stream = (ic_png_stream *)png_get_progressive_ptr(png);
    ic_heap_allow_rows(&stream->heap, png_get_image_width(png, pngInfo));
    if (!ic_png_configure(png, pngInfo, 0, &stream->header, &stream->passes, &stream->failure)) {
        longjmp(stream->failure.jump, 1);
    }
    stream->rowsExpected = ic_rows_expected(stream->header.width, stream->header.height, stream->passes);
    stream->headerRead = 1;
}

static void ic_stream_row(png_structp png, png_bytep row, png_uint_32 number, int pass) {
    (void)row;
    (void)number;
    (void)pass;
    ic_png_stream *stream = (ic_png_stream *)png_get_progressive_ptr(png);
    stream->rowsSeen += 1;
}

ic_png_stream *ic_png_stream_create(void) {
    ic_png_stream *stream = calloc(1, sizeof *stream);
    if (stream == NULL) return NULL;
    if (setjmp(stream->failure.jump)) {
        ic_png_stream_destroy(stream);
        return NULL;
    }
    stream->png = ic_png_create(&stream->failure, &stream->heap);
    if (stream->png == NULL) {
        free(stream);
        return NULL;
    }
    stream->info = png_create_info_struct(stream->png);
    if (stream->info == NULL) {
        ic_png_stream_destroy(stream);
        return NULL;
    }
    png_set_progressive_read_fn(stream->png, stream, ic_stream_info, ic_stream_row, NULL);
    return stream;
}

void ic_png_stream_destroy(ic_png_stream *stream) {
    if (stream == NULL) return;
    if (stream->png != NULL) png_destroy_read_struct(&stream->png, stream->info ? &stream->info : NULL, NULL);
    free(stream);
}

int ic_png_stream_feed(ic_png_stream *stream, const void *data, size_t size) {
    if (stream->failed) return 0;
    if (setjmp(stream->failure.jump)) {
        stream->failed = 1;
        return 0;
    }
    // libpng takes the buffer as non-const but only reads it.
    png_process_data(stream->png, stream->info, (png_bytep)(uintptr_t)data, size);
    return 1;
}

int ic_png_stream_header(const ic_png_stream *stream, ic_png_info *info) {
    if (!stream->headerRead) return 0;
    *info = stream->header;
    return 1;
}

int ic_png_stream_rows_complete(const ic_png_stream *stream) {
    return stream->headerRead && stream->rowsSeen >= stream->rowsExpected;
}

unsigned long long ic_png_stream_rows_seen(const ic_png_stream *stream) { return stream->rowsSeen; }

const char *ic_png_stream_message(const ic_png_stream *stream) { return stream->failure.message; }

size_t ic_png_stream_peak_heap(const ic_png_stream *stream) { return stream->heap.peak; }

size_t ic_png_idat_read_size(void) { return PNG_IDAT_READ_SIZE; }
