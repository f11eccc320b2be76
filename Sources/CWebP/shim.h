// libwebp's decoder and its demuxer (animated WebP: the first frame, composed on its canvas).
// The library's version-checked entry points (WebPGetFeatures, WebPInitDecoderConfig,
// WebPAnimDecoderNew, WebPAnimDecoderOptionsInit) are static inline functions over
// *Internal ones, which Swift imports as they are.
#include <webp/decode.h>
#include <webp/demux.h>
// The encoder, for the provider simulator (imgix-like `fm=webp`) and test fixtures.
#include <webp/encode.h>
