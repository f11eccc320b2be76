import Foundation

/// `[shared]`: the fleet's shared tier (memcached). Empty `servers` (the default)
/// means no tier: the daemon behaves exactly as a lone one.
public struct SharedTierSettings: Sendable, Equatable {
    /// One memcached node, `host:port`.
    package struct Server: Sendable, Hashable, CustomStringConvertible {
        package var host: String
        public var port: Int


        /// `host:port` (an IPv6 host in brackets: `[::1]:11211`); nil when malformed or the
        /// port is outside 1…65535. The port is required: a silent default hides typos.
        public static func parse(_ text: String) -> Server? {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            let host: Substring, port: Substring
            if trimmed.hasPrefix("[") {
                guard let close = trimmed.firstIndex(of: "]"), trimmed[trimmed.index(after: close)...].hasPrefix(":") else { return nil }
                host = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
                port = trimmed[trimmed.index(close, offsetBy: 2)...]
            } else {
                guard let colon = trimmed.lastIndex(of: ":") else { return nil }
                host = trimmed[..<colon]
                port = trimmed[trimmed.index(after: colon)...]
            }
            guard !host.isEmpty, host.utf8.count <= 253, !host.contains(where: { $0.isWhitespace || $0 == "/" || $0 == "[" || $0 == "]" }),
                  !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCIIDigit), let number = Int(port),
                  (1...65535).contains(number) else { return nil }
            return Server(host: String(host), port: number)
        }

        /// `host:port`, IPv6 in brackets: also the node's name on the ketama ring, so every
        /// host of a fleet must spell a node the same way.
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// The memcached nodes; empty: no shared tier.
    package var servers: [Server] = []
    /// Per operation (connect included): a slow or dead node never adds more to a request.
    package var timeout: Duration = .milliseconds(50)
    /// How long a host waits for another host's claim on an image before fetching it itself
    /// (`claim_wait`): the holder may be stuck. Long enough for a thumbnail fetch, short
    /// enough for a user's patience.
    package var claimWait: Duration = .seconds(10)
    /// Prepended to every key, so two fleets (or test runs) can share one memcached.
    public var prefix: String = "imagecached:"
    /// Whose image bytes go to the tier: provider names and `url` (thumbnails of client URLs).
    /// Unsplash is left out by default: its API guidelines require hotlinking its image URLs,
    /// and a fleet serving its images from the fleet's own servers would be re-hosting them.
    package var shareImages: [String] = ["flickr", "pixabay", "url"]

    /// The longest `prefix`: keys are at most 250 bytes, and a hashed key needs 33 after it.
    package static let maximumPrefixBytes = 64
    /// What `share_images` may name.
    package static var shareableSources: [String] { CacheConfiguration.providerNames + ["url"] }

    /// The documented defaults (no tier).
    public init() {}

    /// Whether there is a tier.
    package var isEnabled: Bool { !servers.isEmpty }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
