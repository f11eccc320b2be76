/// Where the daemon serves its Prometheus metrics (`[daemon] metrics_listen`): a TCP
/// `host:port` or a Unix socket path.
///
/// Typed here, once, so the parser rejects a malformed value at start (exit 78) and the
/// server never parses a string. The endpoint has no authentication: loopback
/// (`127.0.0.1:9464`) or a socket path whose folder's permissions decide who reads it are the
/// documented choices, but any address is accepted (a scraper on another host is a deliberate
/// operator decision, as with node_exporter).
public enum MetricsListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// `host:port`; `host` is a name or an IPv4 literal, or an IPv6 literal written `[::1]`
    /// in the file (kept here without brackets).
    case tcp(host: String, port: Int)
    /// An absolute Unix socket path (at most 107 bytes, the kernel's limit).
    case unix(path: String)

    /// The longest Unix socket path the kernel takes (`sun_path` less its terminator).
    static let maximumSocketPathBytes = 107

    /// The value as cache.conf writes it.
    public var description: String {
        switch self {
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): return path
        }
    }

    /// Parses a cache.conf value: an absolute path (or `~/…`, expanded with `home`) is a Unix
    /// socket; anything else must be `host:port` with a port in 0…65535 (0: a free port the
    /// kernel picks, logged at start; for tests and one-off runs).
    static func parse(_ value: String, home: String) throws(ConfigValueProblem) -> MetricsListenAddress {
        if value.hasPrefix("/") || value.hasPrefix("~/") {
            let path = try ConfigStringRules.absolutePath(value, home: home)
            guard path.utf8.count <= maximumSocketPathBytes else {
                throw .outOfRange(rule: "a Unix socket path is at most \(maximumSocketPathBytes) bytes")
            }
            return .unix(path: path)
        }
        let expected = "host:port (e.g. 127.0.0.1:9464 or [::1]:9464) or an absolute Unix socket path"
        guard let colon = value.lastIndex(of: ":") else { throw .bad(expected: expected) }
        var host = String(value[..<colon])
        let portText = value[value.index(after: colon)...]
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 {
            host = String(host.dropFirst().dropLast())
            guard host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { throw .bad(expected: expected) }
        } else {
            guard !host.isEmpty, !host.contains(":"),
                  host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }) else {
                throw .bad(expected: expected)
            }
        }
        // At most five digits before converting: no overflow on a huge number.
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), (0...65535).contains(port) else {
            throw .outOfRange(rule: "the port is 0-65535")
        }
        return .tcp(host: host, port: port)
    }
}
