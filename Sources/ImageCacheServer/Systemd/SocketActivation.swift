#if canImport(Glibc)
import Glibc
#endif

/// systemd socket activation (`sd_listen_fds(3)`), without libsystemd.
///
/// systemd passes listening sockets from fd 3 and says so in `LISTEN_FDS`, addressed to one
/// process by `LISTEN_PID`. The variables are removed after reading so that no child process
/// mistakes the sockets for its own. The daemon serves on the first socket and never creates
/// or removes a socket file in that mode.
public enum SocketActivation {
    /// The first inherited descriptor, by the protocol's definition.
    static let firstDescriptor: CInt = 3

    /// Takes the socket systemd passed to this process, if any, and unsets `LISTEN_PID`,
    /// `LISTEN_FDS` and `LISTEN_FDNAMES`. Call it early, before threads that read the
    /// environment are busy.
    ///
    /// - Returns: nil when the process was not socket-activated.
    /// - Throws: when the variables are addressed to us but the socket is unusable.
    public static func takeInheritedSocket() throws(DaemonStartError) -> ListeningSocket? {
        let pid = getenv("LISTEN_PID").map { String(cString: $0) }
        let count = getenv("LISTEN_FDS").map { String(cString: $0) }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        guard let pid, let count, Int32(pid) == getpid() else { return nil }
        guard let number = Int(count), number >= 1 else {
            throw .badInheritedSocket("LISTEN_FDS=\(count) names no socket")
        }
        let fd = firstDescriptor
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        guard integerOption(fd, SO_TYPE) == Int32(SOCK_STREAM.rawValue) else {
            throw .badInheritedSocket("fd \(fd) is not a stream socket (ListenStream= is required)")
        }
        guard integerOption(fd, SO_DOMAIN) == AF_UNIX else {
            throw .badInheritedSocket("fd \(fd) is not a Unix socket")
        }
        return ListeningSocket(descriptor: fd, path: boundPath(fd), isInherited: true, createdFile: nil, lockDescriptor: nil)
    }

    private static func integerOption(_ fd: CInt, _ name: CInt) -> CInt? {
        var value: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        guard getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 else { return nil }
        return value
    }

    /// The path the inherited socket is bound to, for messages.
    private static func boundPath(_ fd: CInt) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return withUnsafeBytes(of: address.sun_path) { raw in
            let bytes = raw.prefix(while: { $0 != 0 })
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }
}
