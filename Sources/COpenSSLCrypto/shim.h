// SHA-256 from OpenSSL's libcrypto (already a dependency of libcurl-openssl): cache-key
// file names and content checksums.
#ifndef IMAGECACHED_COPENSSL_SHIM_H
#define IMAGECACHED_COPENSSL_SHIM_H
#include <openssl/sha.h>
#include <openssl/evp.h>
#endif
