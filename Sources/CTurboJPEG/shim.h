// The TurboJPEG 2.1 API (libjpeg-turbo 2.1.5: no tj3* functions). Function-like macros
// (TJSCALED, TJPAD) do not import and are computed in Swift.
#ifndef IMAGECACHED_CTURBOJPEG_SHIM_H
#define IMAGECACHED_CTURBOJPEG_SHIM_H
#include <stddef.h>
#include <turbojpeg.h>
#endif
