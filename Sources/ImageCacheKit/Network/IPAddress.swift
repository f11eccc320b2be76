#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as raw bytes, so the URL policy can compare and classify the
/// address a host name actually resolved to, not the name the URL claims.
package struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Parses a textual address (`10.0.0.1`, `::1`, `[::1]`); nil when it is a host name.
    public init?(_ text: String) {
        var literal = text
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    /// Wraps raw bytes read from a socket address (4 or 16 of them).
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), so the mapped
    /// form cannot smuggle a private IPv4 address past the checks.
    var unmapped: IPAddress {
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return IPAddress(bytes: Array(bytes[12..<16]))
        }
        return self
    }

    /// Loopback, link-local, private (RFC 1918, unique-local), shared (CGNAT), unspecified or
    /// multicast: the addresses an image URL must never make the daemon reach unless a user
    /// listed them in `allowed_hosts` (a fetched URL is attacker-controlled data).
    package var isInternal: Bool {
        let a = unmapped.bytes
        if a.count == 4 {
            switch (a[0], a[1]) {
            case (0, _), (10, _), (127, _): return true
            case (169, 254): return true
            case (172, 16...31): return true
            case (192, 168): return true
            case (100, 64...127): return true
            case (224...255, _): return true
            default: return false
            }
        }
        if a.allSatisfy({ $0 == 0 }) { return true }                       // ::
        if a[0..<15].allSatisfy({ $0 == 0 }) && a[15] == 1 { return true } // ::1
        if a[0] == 0xfe && (a[1] & 0xc0) == 0x80 { return true }           // fe80::/10
        if (a[0] & 0xfe) == 0xfc { return true }                           // fc00::/7
        if a[0] == 0xff { return true }                                    // multicast
        return false
    }

    /// The conventional text form (`127.0.0.1`, `::1`), as used in messages and comparisons.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: 64)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, 64) } != nil
        guard ok else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
