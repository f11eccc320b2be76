// libpng's classic (progressive, row-at-a-time) reader behind a setjmp-free C interface.
//
// The classic API reports errors by longjmp, which must never cross a Swift frame: every
// entry point here sets its own jump target, and libpng's error and warning functions are
// replaced (the default ones print to stderr). Rows come out as 8-bit grey, RGB or RGBA
// (straight alpha), sRGB-encoded: gAMA is honoured, and a file without gAMA/sRGB is taken
// as sRGB at every bit depth, as Pillow, libvips and browsers read it. Nothing after the last
// row is read, so a damaged trailer (a mangled chunk before IEND, no IEND) costs no pixel.
#ifndef IMAGECACHED_CPNGREADER_H
#define IMAGECACHED_CPNGREADER_H
#include <stddef.h>

typedef struct ic_png_reader ic_png_reader;

typedef struct {
    unsigned int width;
    unsigned int height;
    /// 1 (grey), 3 (RGB) or 4 (RGBA) bytes per pixel.
    unsigned int channels;
    /// 1 for Adam7: rows only exist once the whole image is read (`ic_png_read_image`).
    int interlaced;
} ic_png_info;

/// A reader over `size` bytes at `data` (borrowed until destroyed); NULL when out of memory.
ic_png_reader *ic_png_reader_create(const void *data, size_t size);
void ic_png_reader_destroy(ic_png_reader *reader);
/// Reads the header and sets the output layout. 1 on success, 0 on error (see message).
int ic_png_read_info(ic_png_reader *reader, ic_png_info *info);
/// Reads the next `count` rows of a non-interlaced image into `rows` (`rowBytes` apart).
int ic_png_read_rows(ic_png_reader *reader, unsigned char *rows, unsigned int count, size_t rowBytes);
/// Reads the whole image (any interlacing) into `image` (`rowBytes` apart).
int ic_png_read_image(ic_png_reader *reader, unsigned char *image, size_t rowBytes);
/// libpng's message for the error that stopped the reader ("" when none).
const char *ic_png_reader_message(const ic_png_reader *reader);
#endif
