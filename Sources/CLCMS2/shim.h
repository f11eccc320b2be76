// LittleCMS 2 (colour management). Pixel-format macros built from other macros do not
// import, so the ones used are re-exported as constants; and a context whose error handler
// counts errors instead of printing, so a broken profile is seen by the caller (which then
// treats the image as sRGB) and never reaches stderr.
#ifndef IMAGECACHED_CLCMS2_SHIM_H
#define IMAGECACHED_CLCMS2_SHIM_H
#include <lcms2.h>

static const cmsUInt32Number IC_TYPE_GRAY_8 = TYPE_GRAY_8;
static const cmsUInt32Number IC_TYPE_RGB_8 = TYPE_RGB_8;
static const cmsUInt32Number IC_TYPE_RGBA_8 = TYPE_RGBA_8;
static const cmsUInt32Number IC_TYPE_CMYK_8 = TYPE_CMYK_8;
static const cmsUInt32Number IC_TYPE_CMYK_8_REV = TYPE_CMYK_8_REV;
static const cmsUInt32Number IC_INTENT_PERCEPTUAL = INTENT_PERCEPTUAL;
static const cmsUInt32Number IC_FLAGS_COPY_ALPHA = cmsFLAGS_COPY_ALPHA;
static const cmsUInt32Number IC_FLAGS_NOCACHE = cmsFLAGS_NOCACHE;

static void ic_lcms_count_error(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)code;
    (void)text;
    int *errors = (int *)cmsGetContextUserData(context);
    if (errors != NULL) *errors += 1;
}

/// A context whose errors are counted in `*errors` (which must outlive it); NULL when out of memory.
static inline cmsContext ic_lcms_context(int *errors) {
    cmsContext context = cmsCreateContext(NULL, errors);
    if (context != NULL) cmsSetLogErrorHandlerTHR(context, ic_lcms_count_error);
    return context;
}
#endif
