// Every warning libjpeg raises during one TurboJPEG 2.1 decode, not just the first.
//
// TurboJPEG 2.1.5 keeps only the text of the first warning, and `tjDecompress2` returns -1
// for any warning: a harmless "extraneous bytes" warning hides a later "premature end of data
// segment" (pixels missing, filled with grey). `ic_tj_decompress` runs `tjDecompress2` with
// libjpeg's `emit_message` wrapped for the call, recording each warning's code (JWRN_*, from
// jerror.h) so that policy, in Swift, can tell a harmless warning from missing pixels.
#ifndef IMAGECACHED_CJPEGWARNINGS_H
#define IMAGECACHED_CJPEGWARNINGS_H
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>

/// Most distinct warning codes kept per decode (libjpeg has a dozen).
#define IC_JPEG_WARNING_CODES 16

typedef struct {
    /// 1 when the warnings were recorded; 0 when TurboJPEG's handle did not have the layout of
    /// libjpeg-turbo 2.1 (then only TurboJPEG's first message is known).
    int recorded;
    /// Number of warnings raised (libjpeg's `num_warnings` for this decode).
    long count;
    /// Distinct JWRN_* codes raised, in order of first appearance.
    int codes[IC_JPEG_WARNING_CODES];
    int codeCount;
} ic_jpeg_warnings;

/// `tjDecompress2`, recording every warning into `warnings`. Same arguments and result.
/// `handle` is a `tjhandle` from `tjInitDecompress`.
int ic_tj_decompress(void *handle, const unsigned char *source, unsigned long size,
                     unsigned char *destination, int width, int pitch, int height,
                     int pixelFormat, int flags, ic_jpeg_warnings *warnings);

/// `tjDecompressToYUVPlanes` (the Y, Cb and Cr planes as the file stores them, at a DCT
/// scale: no chroma upsampling, no colour conversion), recording every warning into
/// `warnings`. Same arguments and result.
int ic_tj_decompress_to_planes(void *handle, const unsigned char *source, unsigned long size,
                               unsigned char **planes, int width, int *strides, int height,
                               int flags, ic_jpeg_warnings *warnings);
#endif

// The module's umbrella header (named after the target) also exports the streaming decoder.
#include "CJPEGStream.h"
