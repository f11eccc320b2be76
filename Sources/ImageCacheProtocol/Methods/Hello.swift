/// The protocol revision this package speaks; `hello` reports it so a client can refuse a
/// daemon too old or too new for it instead of failing on a renamed field later.
public enum ProtocolVersion {
    /// Bumped when a change would break an existing client.
    public static let current = 1
}

extension Methods {
    /// `hello`: who is answering, which protocol revision, which providers have keys.
    /// The CLI calls it first so "no API key for flickr" is said before a search fails.
    public enum Hello: RPCMethod {
        public typealias Params = NoParams
        public typealias Result = HelloResult
        public static let name = MethodName.hello
    }
}

/// The answer to `hello`.
public struct HelloResult: Codable, Sendable, Hashable {
    /// Whether a provider can be searched: `configured` is false when it has no API key,
    /// in which case naming it in a search answers 1002.
    public struct Provider: Codable, Sendable, Hashable {
        /// The provider name used in `search` and in photo ids.
        public var name: String
        /// Whether it has an API key.
        public var configured: Bool
        public init(name: String, configured: Bool) {
            self.name = name
            self.configured = configured
        }
    }

    /// Always `"imagecached"`.
    public var name: String
    /// The daemon's version, `x.y.z`.
    public var version: String
    /// The protocol revision (`ProtocolVersion.current`); written `protocol` on the wire.
    public var protocolVersion: Int
    /// Every provider this daemon knows.
    public var providers: [Provider]

    public init(name: String = "imagecached", version: String, protocolVersion: Int = ProtocolVersion.current, providers: [Provider]) {
        self.name = name
        self.version = version
        self.protocolVersion = protocolVersion
        self.providers = providers
    }

    enum CodingKeys: String, CodingKey {
        case name, version, protocolVersion = "protocol", providers
    }
}
