// libpng's classic (progressive, row-at-a-time) reader behind a setjmp-free C interface.
//
// The classic API reports errors by longjmp, which must never cross a Swift frame: every
// entry point here sets its own jump target, and libpng's error and warning functions are
// replaced (the default ones print to stderr). Rows come out as 8-bit grey, RGB or RGBA
// (straight alpha). An image that declares its colours (an iCCP profile, or cHRM primaries
// without an sRGB chunk) comes out as stored, for the caller to convert with its profile
// (`ic_png_reader_colour`); otherwise gAMA is honoured, and a file without gAMA/sRGB is taken
// as sRGB at every bit depth, as Pillow, libvips and browsers read it. Nothing after the
// chunk the last row ends in is read (that chunk is read to its CRC), so a damaged trailer (a
// mangled chunk before IEND, no IEND, a zlib stream ending in a later IDAT) costs no pixel.
// Ancillary chunks other than tRNS, gAMA, cHRM, sRGB and iCCP (text, eXIf, private chunks…)
// are skipped unread, and libpng's heap is capped (`IC_PNG_METADATA_HEAP`): what a chunk
// declares never decides an allocation.
#ifndef IMAGECACHED_CPNGREADER_H
#define IMAGECACHED_CPNGREADER_H
#include <stddef.h>

/// What libpng's heap may hold besides its two rows, per reader (both kinds): the structures,
/// the zlib state, a palette, gamma tables and an ICC profile (up to libpng's own limit of
/// 8 000 000 bytes; the info structure keeps the buffer the profile was read into). An
/// allocation past it is refused, so a chunk that declares more than the file can be is never
/// allocated.
#define IC_PNG_METADATA_HEAP (8u << 20)

typedef struct ic_png_reader ic_png_reader;

typedef struct {
    unsigned int width;
    unsigned int height;
    /// 1 (grey), 3 (RGB) or 4 (RGBA) bytes per pixel.
    unsigned int channels;
    /// 1 for Adam7: rows only exist once the whole image is read (`ic_png_read_image`).
    int interlaced;
    /// 1 when the rows come out as stored, without gamma correction, because the image
    /// declares its colours (iCCP, or cHRM without sRGB): see `ic_png_colour`.
    int colourTagged;
} ic_png_info;

/// What a colour-tagged image declares, valid until the reader is destroyed.
typedef struct {
    /// The inflated iCCP profile (NULL when none) and its length.
    const unsigned char *icc;
    size_t iccLength;
    /// 1 with the cHRM chunk's white point and primaries (CIE x, y).
    int hasPrimaries;
    double whiteX, whiteY, redX, redY, greenX, greenY, blueX, blueY;
    /// The gAMA chunk's encoding gamma (0.45455 for a 2.2 display), 0 when none.
    double gamma;
} ic_png_colour;

/// A reader over `size` bytes at `data` (borrowed until destroyed); NULL when out of memory.
ic_png_reader *ic_png_reader_create(const void *data, size_t size);
void ic_png_reader_destroy(ic_png_reader *reader);
/// Reads the header and sets the output layout. 1 on success, 0 on error (see message).
int ic_png_read_info(ic_png_reader *reader, ic_png_info *info);
/// What the image declares about its colours (after `ic_png_read_info`). 1 when tagged.
int ic_png_reader_colour(ic_png_reader *reader, ic_png_colour *colour);
/// Reads the next `count` rows of a non-interlaced image into `rows` (`rowBytes` apart).
int ic_png_read_rows(ic_png_reader *reader, unsigned char *rows, unsigned int count, size_t rowBytes);
/// Reads the whole image (any interlacing) into `image` (`rowBytes` apart).
int ic_png_read_image(ic_png_reader *reader, unsigned char *image, size_t rowBytes);
/// libpng's message for the error that stopped the reader ("" when none).
const char *ic_png_reader_message(const ic_png_reader *reader);
/// The most libpng's heap held at once, in bytes (never more than its limit,
/// `IC_PNG_METADATA_HEAP` plus two rows).
size_t ic_png_reader_peak_heap(const ic_png_reader *reader);
/// How many bytes of an IDAT chunk's data the pull reader inflates at a time (libpng's
/// `PNG_IDAT_READ_SIZE`): each read starts where the chunk's data or the previous read ends.
/// The progressive stream is given the same pieces, so that a damaged zlib stream after the
/// last row (its checksum) meets the same inflate calls and so the same verdict.
size_t ic_png_idat_read_size(void);
/// libpng's progressive reader (`png_process_data`), fed a body in chunks as they arrive, with
/// the same error handling, limits and output layout as the reader above. It keeps no row:
/// it proves that every row of every pass decodes, for verifying a download as it is written.
typedef struct ic_png_stream ic_png_stream;

/// NULL when out of memory.
ic_png_stream *ic_png_stream_create(void);
void ic_png_stream_destroy(ic_png_stream *stream);
/// Decodes what `size` more bytes allow. 1 on success, 0 on error (see message); after an
/// error every feed fails.
int ic_png_stream_feed(ic_png_stream *stream, const void *data, size_t size);
/// 1 and the output layout once the header chunks before the image data were read.
int ic_png_stream_header(const ic_png_stream *stream, ic_png_info *info);
/// 1 once every row of every pass has been decoded.
int ic_png_stream_rows_complete(const ic_png_stream *stream);
/// Rows decoded so far (over all passes).
unsigned long long ic_png_stream_rows_seen(const ic_png_stream *stream);
/// libpng's message for the error that stopped the stream ("" when none).
const char *ic_png_stream_message(const ic_png_stream *stream);
/// The most libpng's heap held at once, in bytes (as `ic_png_reader_peak_heap`).
size_t ic_png_stream_peak_heap(const ic_png_stream *stream);
#endif
