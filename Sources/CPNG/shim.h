// libpng's simplified API (png_image), which needs no setjmp. Format macros built from
// other macros do not import, so they are re-exported here as constants.
#ifndef IMAGECACHED_CPNG_SHIM_H
#define IMAGECACHED_CPNG_SHIM_H
#include <png.h>

static const png_uint_32 IC_PNG_IMAGE_VERSION = PNG_IMAGE_VERSION;
static const png_uint_32 IC_PNG_FORMAT_RGB = PNG_FORMAT_RGB;
static const png_uint_32 IC_PNG_FORMAT_RGBA = PNG_FORMAT_RGBA;
static const png_uint_32 IC_PNG_FORMAT_GRAY = PNG_FORMAT_GRAY;
static const png_uint_32 IC_PNG_FORMAT_FLAG_ALPHA = PNG_FORMAT_FLAG_ALPHA;
static const png_uint_32 IC_PNG_FORMAT_FLAG_COLOR = PNG_FORMAT_FLAG_COLOR;
static const png_uint_32 IC_PNG_FORMAT_FLAG_LINEAR = PNG_FORMAT_FLAG_LINEAR;
#endif
