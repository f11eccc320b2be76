// libjpeg's decompressor fed a body in chunks as they arrive (a suspending source manager),
// for verifying a download while it is written: `ic_jpeg_stream_feed` hands libjpeg each
// chunk and runs it as far as the bytes so far allow; the bytes it has not consumed yet (at
// most one marker segment or one MCU's worth) are kept and the next chunk is appended.
//
// libjpeg resumes a suspended unit from its start, so a unit is retried only once the held
// bytes have doubled since it suspended: a marker segment trickling in byte by byte costs
// O(n log n), not O(n^2).
//
// The calls are jpeg_read_header, then (after the caller has seen the header and the memory
// it will need: `IC_JPEG_STREAM_HEADER`) jpeg_start_decompress, jpeg_read_scanlines and
// jpeg_finish_decompress, each resumed where it suspended. A multi-scan (progressive) frame is
// decoded in libjpeg's ordinary mode, not buffered-image mode: jpeg_start_decompress then
// suspends until the last scan has been absorbed into the coefficient buffer (the entropy
// decoding, the costly part, still runs as the bytes arrive), and one output pass at the
// chosen scale follows. Buffered-image mode would only add per-scan control, which the
// caller's own marker walk already has (scan count and work limits), and it forces a full
// coefficient buffer even on single-scan files.
//
// Fatal errors longjmp inside this file only (never across a Swift frame); warnings are
// recorded as `ic_jpeg_warnings` (the same record `ic_tj_decompress` fills), so the policy
// that tells harmless ones from missing pixels stays in one place (TurboJPEGDiagnostics).
// At the end of the body (`end_of_input`) the source behaves exactly as TurboJPEG's memory
// source: "Premature end of JPEG file" and an inserted EOI, so verdicts match a whole-file
// decode.
#ifndef IMAGECACHED_CJPEGSTREAM_H
#define IMAGECACHED_CJPEGSTREAM_H
#include <stddef.h>
#include "CJPEGWarnings.h"

typedef struct ic_jpeg_stream ic_jpeg_stream;

/// What a feed reached.
enum {
    /// libjpeg failed: see `ic_jpeg_stream_message`. Further feeds fail the same way.
    IC_JPEG_STREAM_FAILED = -1,
    /// The bytes so far are consumed; more are needed.
    IC_JPEG_STREAM_NEED_MORE = 0,
    /// The header up to the first scan was read (`ic_jpeg_stream_info` is valid) and nothing
    /// was allocated for the decode yet: call `ic_jpeg_stream_start` to go on.
    IC_JPEG_STREAM_HEADER = 1,
    /// The image is complete: every scanline was produced and EOI was read.
    IC_JPEG_STREAM_DONE = 2,
};

typedef struct {
    unsigned int width;
    unsigned int height;
    int components;
    /// libjpeg's J_COLOR_SPACE of the file (JCS_UNKNOWN when it cannot tell).
    int colorSpace;
    /// 1 when the frame has several scans: the decode holds every coefficient at once.
    int multipleScans;
    /// The size of the output at 1/8 scale.
    unsigned int scaledWidth;
    unsigned int scaledHeight;
} ic_jpeg_stream_info;

/// A decompressor at 1/8 scale, fast IDCT, no fancy upsampling; NULL when out of memory.
ic_jpeg_stream *ic_jpeg_stream_create(void);
void ic_jpeg_stream_destroy(ic_jpeg_stream *stream);
/// Appends `size` bytes (may be 0) and runs libjpeg as far as they allow; `end_of_input`
/// says no byte will follow. Returns an IC_JPEG_STREAM_* status.
int ic_jpeg_stream_feed(ic_jpeg_stream *stream, const unsigned char *data, size_t size, int end_of_input);
/// After IC_JPEG_STREAM_HEADER: decode into `out_color_space` (a J_COLOR_SPACE) and run with
/// the bytes already held. Returns an IC_JPEG_STREAM_* status.
int ic_jpeg_stream_start(ic_jpeg_stream *stream, int out_color_space, int end_of_input);
/// Valid once the header was read.
const ic_jpeg_stream_info *ic_jpeg_stream_info_of(const ic_jpeg_stream *stream);
/// Every warning raised so far.
const ic_jpeg_warnings *ic_jpeg_stream_warnings(const ic_jpeg_stream *stream);
/// Bytes held: not yet consumed by libjpeg, plus the scanline buffer.
size_t ic_jpeg_stream_held_bytes(const ic_jpeg_stream *stream);
/// libjpeg's message for the error that stopped the decode ("" when none).
const char *ic_jpeg_stream_message(const ic_jpeg_stream *stream);
#endif
