#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole regular file the engine wrote itself (a body spilled to disk, a download
/// about to be verified): the pipeline and the downloads both need it, and neither owns it.
enum WholeFile {
    /// The file's bytes, never through a symlink at its last component. A file shorter than
    /// its size said when opened gives what is there. Errors keep their `errno`'s kind
    /// (`StorageFailure`): out of descriptors is `busy`, a vanished file `storage_unavailable`.
    static func read(_ path: String, what: String) throws(StorageError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError("cannot read \(what) \(path)", errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StorageError("cannot read \(what) \(path)", errno: errno) }
        // Read straight into the array's storage: a body is megabytes, and zero-filling it
        // first and then copying what was read into a second array cost two more passes.
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: max(0, Int(info.st_size))) { buffer, count in
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
}
