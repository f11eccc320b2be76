// giflib's low-level reader (DGifOpen with a read callback, record by record), never
// DGifSlurp: the daemon reads only up to the first frame, and bounds the walk itself.
// giflib ships no pkg-config file, so the module map links `gif` by name.
#include <stddef.h>
#include <gif_lib.h>
