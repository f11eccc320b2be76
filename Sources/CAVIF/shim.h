// libavif (decoding; the simulator also encodes, with libaom). Debian's libavif decodes AV1 with dav1d, or libaom when dav1d is absent).
#include <avif/avif.h>
