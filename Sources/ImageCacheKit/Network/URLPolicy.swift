import CCurl
import ImageCacheConfig
import ImageCacheProtocol

/// Which URLs the daemon may fetch, decided in one place (docs/protocol.md, "Redirects and credentials") for the first URL and
/// every redirect hop alike: the URLs come from provider answers and clients, so they are
/// untrusted input that must not turn the daemon into a probe of the local network.
///
/// The rules: `https` only (`http` too with `allow_http`); the host must be a provider's API or
/// image host or be listed in `allowed_hosts`; and the address the name *resolves to* must not be
/// loopback, link-local or private unless that address is listed. The address rule is checked
/// when the socket is opened (`refusal(for:target:)`), since only then is the address known.
public struct URLPolicy: Sendable {
    /// Where the three providers serve their images; `*.` matches any subdomain.
    public static let providerImageHosts: [String] = [
        "images.unsplash.com", "plus.unsplash.com", "*.staticflickr.com", "pixabay.com", "cdn.pixabay.com",
    ]

    /// A URL that passed the static checks, with what the socket-level check needs.
    public struct Target: Sendable, Equatable {
        /// The URL as curl normalised it (what will actually be requested).
        public var url: String
        /// `http` or `https`, lower-case.
        package var scheme: String
        /// Lower-case host, without IPv6 brackets.
        package var host: String
        /// The port, the scheme's default when the URL names none (80, 443).
        public var port: Int
        /// True when the host matched by name; false when it is only allowed because it may
        /// resolve to a listed address (then the resolved address must be listed).
        package var approvedByName: Bool

        /// Whether `other` is the same origin (scheme, host and port, as browsers and curl
        /// compare them before sending credentials on).
        package func sameOrigin(as other: Target) -> Bool {
            scheme == other.scheme && host == other.host && port == other.port
        }
    }

    /// `allow_http`: plain http is accepted too (tests, demos, a LAN mirror).
    public let allowHTTP: Bool
    private let exactHosts: Set<String>
    private let hostSuffixes: [String]
    private let allowedAddresses: Set<IPAddress>

    /// The policy of a configuration: its `[network]` rules plus the hosts of the providers'
    /// `api_url`s (so provider API calls pass) and their image hosts.
    public init(configuration: CacheConfiguration, imageHosts: [String] = URLPolicy.providerImageHosts) {
        let apiHosts = [configuration.unsplash.apiURL, configuration.flickr.apiURL, configuration.pixabay.apiURL]
            .compactMap { URLPolicy.parse($0)?.host }
        self.init(network: configuration.network, extraHosts: imageHosts + apiHosts)
    }

    /// A policy of explicit host patterns and the `[network]` rules (for tools and tests that
    /// have no provider configuration).
    public init(network: CacheConfiguration.Network, extraHosts: [String]) {
        allowHTTP = network.allowHTTP
        var exact = Set<String>()
        var suffixes: [String] = []
        for entry in extraHosts + network.allowedHosts {
            let host = entry.trimmingASCIIWhitespace().lowercased()
            guard !host.isEmpty else { continue }
            if host.hasPrefix("*.") {
                suffixes.append(String(host.dropFirst()))
            } else if let address = IPAddress(host) {
                exact.insert(address.description)
            } else {
                exact.insert(host)
            }
        }
        exactHosts = exact
        hostSuffixes = suffixes
        allowedAddresses = network.allowedHosts.compactMap { IPAddress($0.trimmingASCIIWhitespace())?.unmapped }
            .reduce(into: Set()) { $0.insert($1) }
    }

    /// Checks scheme and host of `url`; throws `forbidden` (with the URL redacted) when refused.
    public func check(_ url: String) throws(TransferError) -> Target {
        guard let parsed = URLPolicy.parse(url) else {
            throw TransferError(.notFetchable, url: url)
        }
        switch parsed.scheme {
        case "https": break
        case "http" where allowHTTP: break
        case "http": throw TransferError(.httpNotAllowed, url: url)
        default: throw TransferError(.schemeNotAllowed(parsed.scheme), url: url)
        }
        let host = IPAddress(parsed.host)?.description ?? parsed.host
        let byName = exactHosts.contains(host) || hostSuffixes.contains { host.hasSuffix($0) }
        guard byName || (IPAddress(parsed.host) == nil && !allowedAddresses.isEmpty) else {
            throw TransferError(.hostNotAllowed(parsed.host), url: url)
        }
        return Target(url: parsed.url, scheme: parsed.scheme, host: host, port: parsed.port, approvedByName: byName)
    }

    /// Why a connection to `address` for `target` must not be opened, or nil when it may.
    /// A listed address is always allowed; otherwise the host must have matched by name and the
    /// address must not be internal (loopback, link-local, private).
    package func refusal(for address: IPAddress, target: Target) -> String? {
        let address = address.unmapped
        if allowedAddresses.contains(address) { return nil }
        if !target.approvedByName { return "\(target.host) resolved to \(address), which is not in allowed_hosts" }
        if address.isInternal { return "\(target.host) resolved to the internal address \(address)" }
        return nil
    }

    /// Scheme, host and normalised form of an absolute URL, parsed by curl itself so the policy
    /// sees exactly what curl will connect to.
    static func parse(_ url: String) -> (url: String, scheme: String, host: String, port: Int)? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return nil }
        func part(_ which: CURLUPart, flags: UInt32 = 0) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &value, flags) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        guard let scheme = part(CURLUPART_SCHEME)?.lowercased(), let full = part(CURLUPART_URL) else { return nil }
        var host = part(CURLUPART_HOST)?.lowercased() ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        // CURLU_DEFAULT_PORT (1 << 0): the scheme's port when the URL names none.
        let port = part(CURLUPART_PORT, flags: 1).flatMap { Int($0) } ?? 0
        return (full, scheme, host, port)
    }
}

extension String {
    fileprivate func trimmingASCIIWhitespace() -> String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return String(s)
    }
}
