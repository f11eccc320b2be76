#include "CJPEGWarnings.h"
#include <turbojpeg.h>
#include "warning_record.h"

// The start of TurboJPEG 2.1's private `tjinstance`: a compressor, a decompressor, then its
// error manager (whose first member is libjpeg's). Checked, not assumed: the decompressor's
// `err` must point exactly at that error manager, else nothing is touched.
struct ic_tj_prefix {
    struct jpeg_compress_struct compressor;
    struct jpeg_decompress_struct decompressor;
    struct jpeg_error_mgr errors;
};

struct ic_context {
    ic_jpeg_warnings *warnings;
    void (*original)(j_common_ptr, int);
};

// Decodes are synchronous on one thread, so the context of the running decode is per thread.
static _Thread_local struct ic_context *ic_current;

static void ic_emit_message(j_common_ptr cinfo, int level) {
    struct ic_context *context = ic_current;
    if (context == NULL) return;
    if (level < 0) {
        ic_record_warning(context->warnings, cinfo->err->msg_code);
    }
    context->original(cinfo, level);
}

int ic_tj_decompress(void *handle, const unsigned char *source, unsigned long size,
                     unsigned char *destination, int width, int pitch, int height,
                     int pixelFormat, int flags, ic_jpeg_warnings *warnings) {
    warnings->recorded = 0;
    warnings->count = 0;
    warnings->codeCount = 0;
    struct ic_tj_prefix *instance = (struct ic_tj_prefix *)handle;
    struct jpeg_error_mgr *errors = instance == NULL ? NULL : instance->decompressor.err;
    if (instance == NULL || !instance->decompressor.is_decompressor || errors != &instance->errors
        || errors->emit_message == NULL || errors->emit_message == ic_emit_message) {
        return tjDecompress2(handle, source, size, destination, width, pitch, height, pixelFormat, flags);
    }
    struct ic_context context = { warnings, errors->emit_message };
    struct ic_context *previous = ic_current;
    ic_current = &context;
    errors->emit_message = ic_emit_message;
    int result = tjDecompress2(handle, source, size, destination, width, pitch, height, pixelFormat, flags);
    errors->emit_message = context.original;
    ic_current = previous;
    warnings->recorded = 1;
    return result;
}
