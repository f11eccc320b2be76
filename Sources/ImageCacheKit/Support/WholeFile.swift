#if canImport(Glibc)
import Glibc
#endif

/// Reads (or maps) a whole regular file the engine wrote itself (a body spilled to disk, a
/// download about to be verified): the pipeline and the downloads both need it, and neither
/// owns it.
enum WholeFile {
    /// The file's bytes, never through a symlink at its last component. A file shorter than
    /// its size said when opened gives what is there. Errors keep their `errno`'s kind
    /// (`StorageFailure`): out of descriptors is `busy`, a vanished file `storage_unavailable`.
    static func read(_ path: String, what: String) throws(StorageError) -> [UInt8] {
        let (fd, size) = try opened(path, what: what)
        defer { close(fd) }
        // Read straight into the array's storage: a body is megabytes, and zero-filling it
        // first and then copying what was read into a second array cost two more passes.
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.read(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0, errno == EINTR { continue }
                guard n >= 0 else {
                    failure = errno
                    break
                }
                if n == 0 { break }
                offset += n
            }
            count = offset
        }
        guard failure == 0 else { throw StorageError("cannot read \(what) \(path)", errno: failure) }
        return bytes
    }

    /// Runs `body` over the file's bytes mapped read-only for the call, never through a
    /// symlink at its last component: a body just spilled is still in the page cache, so
    /// mapping it costs neither a copy nor a heap buffer the size of the body (reading it
    /// back cost both, for every spilled body decoded). The length is the file's when opened.
    /// The file must not shrink during the call (the engine's spill files are emptied only
    /// once their body is released). Errors as `read`'s for opening it, and mmap's own (out of
    /// memory, a file system that cannot map). Unlike `read`, an I/O error on a page the kernel
    /// must fetch from the disk again (the body's pages evicted while it waited) is a SIGBUS,
    /// not an error: the price of no copy, for files written moments before.
    static func withMapped<T, E: Error>(_ path: String, what: String,
                                        _ body: (UnsafeRawBufferPointer) throws(E) -> T) throws -> T {
        let (fd, size) = try opened(path, what: what)
        defer { close(fd) }
        guard size > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        guard let map = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), map != MAP_FAILED else {
            throw StorageError("cannot map \(what) \(path)", errno: errno)
        }
        defer { munmap(map, size) }
        return try body(UnsafeRawBufferPointer(start: map, count: size))
    }

    /// The file opened for reading, never through a symlink at its last component, and its
    /// size then.
    private static func opened(_ path: String, what: String) throws(StorageError) -> (fd: Int32, size: Int) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError("cannot read \(what) \(path)", errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw StorageError("cannot read \(what) \(path)", errno: code)
        }
        return (fd, max(0, Int(info.st_size)))
    }
}
