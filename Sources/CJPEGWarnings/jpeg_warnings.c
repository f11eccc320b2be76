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
    struct ic_context *previous;
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

// Wraps libjpeg's `emit_message` of `handle` for one TurboJPEG decode call, so every warning
// it raises lands in `warnings`; false (nothing wrapped, `recorded` stays 0) when the handle
// does not have libjpeg-turbo 2.1's layout. `ic_end_recording` undoes it after the call.
static int ic_begin_recording(void *handle, ic_jpeg_warnings *warnings, struct ic_context *context) {
    warnings->recorded = 0;
    warnings->count = 0;
    warnings->codeCount = 0;
    struct ic_tj_prefix *instance = (struct ic_tj_prefix *)handle;
    struct jpeg_error_mgr *errors = instance == NULL ? NULL : instance->decompressor.err;
    if (instance == NULL || !instance->decompressor.is_decompressor || errors != &instance->errors
        || errors->emit_message == NULL || errors->emit_message == ic_emit_message) {
        return 0;
    }
    context->warnings = warnings;
    context->original = errors->emit_message;
    context->previous = ic_current;
    ic_current = context;
    errors->emit_message = ic_emit_message;
    return 1;
}

static void ic_end_recording(void *handle, struct ic_context *context) {
    struct ic_tj_prefix *instance = (struct ic_tj_prefix *)handle;
    instance->decompressor.err->emit_message = context->original;
    ic_current = context->previous;
    context->warnings->recorded = 1;
}

int ic_tj_decompress(void *handle, const unsigned char *source, unsigned long size,
                     unsigned char *destination, int width, int pitch, int height,
                     int pixelFormat, int flags, ic_jpeg_warnings *warnings) {
    struct ic_context context;
    int wrapped = ic_begin_recording(handle, warnings, &context);
    int result = tjDecompress2(handle, source, size, destination, width, pitch, height, pixelFormat, flags);
    if (wrapped) ic_end_recording(handle, &context);
    return result;
}

int ic_tj_decompress_to_planes(void *handle, const unsigned char *source, unsigned long size,
                               unsigned char **planes, int width, int *strides, int height,
                               int flags, ic_jpeg_warnings *warnings) {
    struct ic_context context;
    int wrapped = ic_begin_recording(handle, warnings, &context);
    int result = tjDecompressToYUVPlanes(handle, source, size, planes, width, strides, height, flags);
    if (wrapped) ic_end_recording(handle, &context);
    return result;
}
