import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket bound to a free port on 127.0.0.1 (close-on-exec), not yet listening: the one
/// way the tests' hand-made peers (a refusing port, a silent server, a scripted server) get a
/// port of their own that no other test can take meanwhile.
///
/// - Returns: the descriptor (the caller owns it) and the port the kernel chose.
public func bindLoopbackTCP() throws -> (descriptor: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else {
        let code = errno
        close(fd)
        throw POSIXError(.init(rawValue: code) ?? .EIO)
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
