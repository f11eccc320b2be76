/// Where an `HTTPServer` listens: a TCP host and port, or a Unix socket path.
///
/// One type for every server of the package, so that each names its address the same way in
/// its logs and errors, and port 0 (a free port the kernel picks) means the same everywhere.
package enum HTTPListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// A host (name or address) and a port; 0 lets the kernel pick a free one.
    case tcp(host: String, port: Int)
    /// A Unix socket at this path.
    case unix(path: String)

    /// 127.0.0.1 at a free port: what tests, the simulator and the gallery bind.
    package static let loopbackAnyPort = HTTPListenAddress.tcp(host: "127.0.0.1", port: 0)

    /// `host:port` (`[host]:port` for an IPv6 address) or the socket's path.
    package var description: String {
        switch self {
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): return path
        }
    }
}
