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
        var bytes = [UInt8](repeating: 0, count: max(0, Int(info.st_size)))
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw StorageError("cannot read \(what) \(path)", errno: errno) }
            if n == 0 { break }
            offset += n
        }
        return Array(bytes.prefix(offset))
    }
}
