#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// A server that could not start listening, said in words an operator can act on.
///
/// NIO describes a failed bind by the system call (`bind(descriptor:ptr:bytes:)`), which names
/// neither the address nor the reason; the errno's text and the address do ("cannot bind
/// 127.0.0.1:9464: Address already in use").
package struct HTTPBindError: Error, Sendable, CustomStringConvertible {
    /// The address that was asked for.
    package let address: HTTPListenAddress
    /// Why it could not be bound, address included.
    package let reason: String

    /// Describes `error`, thrown by NIO while binding `address`.
    package init(_ error: any Error, address: HTTPListenAddress) {
        self.address = address
        if let io = error as? IOError {
            reason = "cannot bind \(address): \(String(cString: strerror(io.errnoCode)))"
        } else if case .unknown(let host, _)? = error as? SocketAddressError {
            reason = "cannot resolve \(host) to an address of this host"
        } else {
            reason = "cannot bind \(address): \(error)"
        }
    }

    package var description: String { reason }
}
