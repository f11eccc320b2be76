// Linux calls that Swift's Glibc module leaves out: glibc declares them only under
// _GNU_SOURCE, which that module is built without, or in headers it does not include
// (<sys/xattr.h>: `fsetxattr`, `fgetxattr`). Nothing else belongs here.
#ifndef IMAGECACHED_CLINUX_SHIM_H
#define IMAGECACHED_CLINUX_SHIM_H
#include <errno.h>
#include <fcntl.h>
#include <linux/memfd.h>
#include <linux/openat2.h>
#include <linux/stat.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

// Declared by glibc (2.27 and later) under _GNU_SOURCE only.
extern int memfd_create(const char *name, unsigned int flags);

// Declared by glibc (2.7 and later) under _GNU_SOURCE only: a temporary file created with
// O_CLOEXEC in the same call, so no child spawned meanwhile inherits it.
extern int mkostemp(char *template_, int flags);

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

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/// `openat2(2)` confined to `dirfd`: no `..` out of it, no absolute path, no symlink at any
/// component (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), no crossing into another mount's
/// magic links. Returns the descriptor, or -1 with `errno` (ENOSYS on kernels before 5.6,
/// where the caller walks the path itself with `O_NOFOLLOW`).
static inline int ic_open_beneath(int dirfd, const char *path, int flags, unsigned int mode) {
    struct open_how how = {0};
    how.flags = (unsigned long long)flags;
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    return (int)fd;
}

/// `renameat2(2)` with `RENAME_NOREPLACE`: fails with EEXIST instead of replacing a name.
/// EINVAL on a file system that does not support the flag, ENOSYS before Linux 3.15.
static inline int ic_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}

#ifndef SYNC_FILE_RANGE_WRITE
#define SYNC_FILE_RANGE_WRITE 2
#endif

// Declared by glibc under _GNU_SOURCE only.
extern int sync_file_range(int fd, __off64_t offset, __off64_t count, unsigned int flags);

/// Starts writing `length` bytes of `fd` from `offset` to the disk without waiting for it
/// (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`; any descriptor of the file will do), so a
/// later `fsync` finds little left to write. 0, or -1 with `errno`.
static inline int ic_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, (__off64_t)offset, (__off64_t)length, SYNC_FILE_RANGE_WRITE);
}

/// Sets the calling thread's nice value (Linux keeps one per thread), as libdispatch does for
/// its lanes (utility: 2). 0, or -1 with `errno`.
static inline int ic_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}

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

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

/// Which file a name or descriptor leads to, as `statx(2)` tells it: the device (encoded as
/// `st_dev` is), the inode number, the birth time when the file system records one
/// (`has_birth`), the change time, and the type, size and link count a removal checks.
struct ic_file_look {
    unsigned long long device;
    unsigned long long inode;
    int has_birth;
    long long birth_seconds;
    unsigned int birth_nanoseconds;
    long long change_seconds;
    unsigned int change_nanoseconds;
    unsigned int mode;
    unsigned int links;
    long long size;
};

/// Fills `out` from `fstatat`'s answer: no birth time.
static inline void ic_file_look_from_stat(const struct stat *info, struct ic_file_look *out) {
    out->device = (unsigned long long)info->st_dev;
    out->inode = (unsigned long long)info->st_ino;
    out->has_birth = 0;
    out->change_seconds = (long long)info->st_ctim.tv_sec;
    out->change_nanoseconds = (unsigned int)info->st_ctim.tv_nsec;
    out->mode = (unsigned int)info->st_mode;
    out->links = (unsigned int)info->st_nlink;
    out->size = (long long)info->st_size;
}

/// `statx(2)` of `name` in `dirfd` (never following a symlink at it), or of `dirfd` itself
/// when `name` is "" (`AT_EMPTY_PATH`). Glibc declares `statx` only under _GNU_SOURCE, so the
/// system call is made directly (Linux 4.11+). Where it is refused outright (ENOSYS: an older
/// kernel; EPERM: a seccomp filter that predates it) `fstatat` answers, without a birth time.
/// 0, or -1 with `errno`.
static inline int ic_look_at(int dirfd, const char *name, struct ic_file_look *out) {
    memset(out, 0, sizeof *out);
    int flags = AT_SYMLINK_NOFOLLOW | (name[0] == 0 ? AT_EMPTY_PATH : 0);
    struct statx info;
    memset(&info, 0, sizeof info);
    if (syscall(SYS_statx, dirfd, name, flags, STATX_BASIC_STATS | STATX_BTIME, &info) == 0) {
        out->device = (unsigned long long)makedev(info.stx_dev_major, info.stx_dev_minor);
        out->inode = (unsigned long long)info.stx_ino;
        out->has_birth = (info.stx_mask & STATX_BTIME) != 0;
        out->birth_seconds = (long long)info.stx_btime.tv_sec;
        out->birth_nanoseconds = info.stx_btime.tv_nsec;
        out->change_seconds = (long long)info.stx_ctime.tv_sec;
        out->change_nanoseconds = info.stx_ctime.tv_nsec;
        out->mode = info.stx_mode;
        out->links = info.stx_nlink;
        out->size = (long long)info.stx_size;
        return 0;
    }
    if (errno != ENOSYS && errno != EPERM) return -1;
    struct stat fallback;
    if (fstatat(dirfd, name, &fallback, flags) != 0) return -1;
    ic_file_look_from_stat(&fallback, out);
    return 0;
}
#endif
