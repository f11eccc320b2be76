#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads one delivered file for the browser, read-only and without following a symbolic
/// link at its last component (`O_NOFOLLOW`): the daemon's cache files are regular files, so
/// anything else (a link planted where a delivered file was, a FIFO) is refused.
enum DeliveredFile {
    /// Why a file could not be served.
    enum Failure: Error, Equatable {
        /// Gone (evicted after its grace period) or not a regular file.
        case unavailable
        /// Larger than the bridge serves.
        case tooLarge
    }

    /// The largest file served (delivered thumbnails are far smaller).
    static let maxBytes = 64 * 1024 * 1024

    /// The whole file.
    static func contents(of path: String) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .unavailable }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw .unavailable }
        guard info.st_size >= 0, info.st_size <= maxBytes else { throw .tooLarge }
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, size - filled) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            filled += n
        }
        guard filled == size else { throw .unavailable }
        return bytes
    }
}
