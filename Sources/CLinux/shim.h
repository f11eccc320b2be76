// Linux calls that Swift's Glibc module leaves out: glibc declares them only under
// _GNU_SOURCE, which that module is built without. Nothing else belongs here.
#ifndef IMAGECACHED_CLINUX_SHIM_H
#define IMAGECACHED_CLINUX_SHIM_H
#include <errno.h>
#include <fcntl.h>
#include <linux/memfd.h>

// Declared by glibc (2.27 and later) under _GNU_SOURCE only.
extern int memfd_create(const char *name, unsigned int flags);

// The file-sealing commands, from the kernel's ABI (<linux/fcntl.h>, which cannot be
// included beside glibc's <fcntl.h>): the values are fixed since Linux 3.17.
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#define F_SEAL_WRITE 0x0008
#endif

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

/// An anonymous memory file that may be sealed, closed on exec. Made non-executable where
/// the kernel knows how (6.3+, and required when `vm.memfd_noexec` is 2); older kernels
/// refuse the flag with EINVAL and get the plain call.
static inline int ic_memfd_create_sealable(const char *name) {
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
    if (fd < 0 && errno == EINVAL) fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    return fd;
}

/// Seals `fd` against any change of its size or content, and against removing the seals.
static inline int ic_seal_immutable(int fd) {
    return fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
}

/// The seals on `fd` (for tests), or -1.
static inline int ic_get_seals(int fd) {
    return fcntl(fd, F_GET_SEALS);
}
#endif
