// Recording one libjpeg warning into an ic_jpeg_warnings (shared by the TurboJPEG wrapper
// and the streaming decoder, so both count the same way).
#ifndef IMAGECACHED_WARNING_RECORD_H
#define IMAGECACHED_WARNING_RECORD_H
#include "CJPEGWarnings.h"

static inline void ic_record_warning(ic_jpeg_warnings *warnings, int code) {
    warnings->count += 1;
    for (int index = 0; index < warnings->codeCount; index++) {
        if (warnings->codes[index] == code) return;
    }
    if (warnings->codeCount < IC_JPEG_WARNING_CODES) warnings->codes[warnings->codeCount++] = code;
}
#endif
