import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 that refuses every connection for as long as this value lives: a TCP
/// socket bound to it and never listening.
///
/// Why: "start a server, note its port, stop it" leaves a port any other test's server may
/// take the next moment (tests run side by side), and a connect meant to be refused then
/// reaches that server. Holding the port bound keeps it for this test, refusing.
public final class RefusingPort: @unchecked Sendable {
    /// The port number.
    public let port: Int
    private let descriptor: Int32

    public init() throws {
        (descriptor, port) = try bindLoopbackTCP()
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    deinit { close(descriptor) }
}
