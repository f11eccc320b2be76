#if canImport(Glibc)
import Glibc
#endif

/// A `sockaddr_un` built from a path, or from an abstract name (Linux: a leading NUL byte,
/// no terminator), which is how systemd hands out `NOTIFY_SOCKET` addresses starting with `@`.
struct UnixAddress {
    var storage = sockaddr_un()
    var length: socklen_t

    /// - Parameter abstract: the name lives in the abstract namespace, not the file system.
    init(path: String, abstract: Bool = false) throws(DaemonStartError) {
        storage.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if abstract { bytes.insert(0, at: 0) }
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        // A path needs room for its NUL terminator; an abstract name has none.
        guard bytes.count + (abstract ? 0 : 1) <= capacity else { throw .socketPathTooLong(path: path) }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let offset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        length = socklen_t(offset + bytes.count + (abstract ? 0 : 1))
    }

    /// Calls `body` with the address as the generic `sockaddr` the system calls take.
    func withSockAddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
