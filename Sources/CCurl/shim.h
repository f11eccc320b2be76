// Typed wrappers for libcurl's variadic functions, which Swift cannot call,
// and re-exports of macro constants that do not import. Nothing else belongs here.
#ifndef IMAGECACHED_CCURL_SHIM_H
#define IMAGECACHED_CCURL_SHIM_H
#include <curl/curl.h>

static inline CURLcode ic_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ic_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ic_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ic_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ic_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ic_easy_setopt_write(CURL *h, curl_write_callback f) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode ic_easy_setopt_header(CURL *h, curl_write_callback f) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
static inline CURLcode ic_easy_setopt_xferinfo(CURL *h, curl_xferinfo_callback f) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, f); }
static inline CURLcode ic_easy_setopt_opensocket(CURL *h, curl_opensocket_callback f) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, f); }

static inline CURLcode ic_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ic_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ic_easy_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ic_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }

static inline CURLMcode ic_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

static const long IC_CURL_GLOBAL_DEFAULT = CURL_GLOBAL_DEFAULT;
static const curl_socket_t IC_CURL_SOCKET_BAD = CURL_SOCKET_BAD;
static const size_t IC_CURL_WRITEFUNC_PAUSE = CURL_WRITEFUNC_PAUSE;
static const long IC_CURL_HTTP_VERSION_2TLS = CURL_HTTP_VERSION_2TLS;
static const long IC_CURLPIPE_MULTIPLEX = CURLPIPE_MULTIPLEX;
static const long IC_CURL_HTTP_VERSION_1_0 = CURL_HTTP_VERSION_1_0;
static const long IC_CURL_HTTP_VERSION_1_1 = CURL_HTTP_VERSION_1_1;
static const long IC_CURL_HTTP_VERSION_2_0 = CURL_HTTP_VERSION_2_0;
static const long IC_CURL_HTTP_VERSION_3 = CURL_HTTP_VERSION_3;

#endif
