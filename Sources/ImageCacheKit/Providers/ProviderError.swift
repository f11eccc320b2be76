import ImageCacheProtocol

/// Why a provider's API did not give what was asked: the facts, as fields, that the server's
/// wire mapping turns into `provider_unavailable`, `rate_limited` (with `data.retryAfter`),
/// `upstream_error` (with `data.status`, `data.body`) or `not_found`. Built by
/// `ProviderErrors`, so every message names the provider, says what to do and never carries
/// a key.
package struct ProviderError: EngineError, Hashable {
    /// What went wrong.
    public enum Failure: Sendable, Hashable {
        /// No key is configured.
        case missingKey
        /// The provider refused the configured key.
        case keyRefused
        /// The provider's rate limit (or the daemon's own limiter) holds further requests;
        /// `stated` is the wait known when it was met, which the message says (`retryAfter`
        /// may be filled in later, from the limiter, without changing the message).
        case rateLimited(stated: Double?)
        /// The provider answered an error; `detail` is its own account (redacted).
        case upstream(detail: String)
        /// The answer is not the expected JSON.
        case notJSON
        /// The answer lacks a required field.
        case missingField(String)
        /// The provider has no photo with this id.
        case noSuchPhoto(id: String)
        /// The configured `api_url` is not a URL.
        case apiURLNotURL(String)
    }

    /// Whose API it is.
    public var provider: ProviderID
    /// What went wrong.
    public var failure: Failure
    /// The provider's HTTP status, when an answer came.
    public var status: Int?
    /// The start of the provider's body, already redacted (`ProviderErrors.excerpt`).
    public var body: String?
    /// Seconds to wait before asking again, when known (clamped).
    package var retryAfter: Double?
    /// The provider's secret values, redacted from every text besides what `URLRedaction`
    /// finds by name.
    package var secrets: [String] = []

    /// An error of `provider` for `failure` with the details that apply.
    public init(_ provider: ProviderID, _ failure: Failure, status: Int? = nil, body: String? = nil,
                retryAfter: Double? = nil, secrets: [String] = []) {
        self.provider = provider
        self.failure = failure
        self.status = status
        self.body = body
        self.retryAfter = retryAfter
        self.secrets = secrets
    }

    public var kind: ErrorKind {
        switch failure {
        case .missingKey, .keyRefused, .apiURLNotURL: return .providerUnavailable
        case .rateLimited: return .rateLimited
        case .upstream, .notJSON, .missingField: return .upstreamError
        case .noSuchPhoto: return .notFound
        }
    }

    /// The message for a person, every URL and secret redacted.
    public var description: String {
        let name = provider.displayName
        switch failure {
        case .missingKey:
            return "\(name) has no API key: set \(provider.configKey) in cache.conf or the \(provider.environmentVariable) environment variable"
        case .keyRefused:
            return "\(name) refused the configured API key (check \(provider.configKey) or \(provider.environmentVariable))"
        case .rateLimited(let stated):
            var message = "\(name) rate limit reached"
            if let stated { message += "; retry in \(OutsideSeconds.wholeSeconds(stated)) s" }
            return message
        case .upstream(let detail):
            return "\(name) answered an error: \(URLRedaction.redact(text: detail, secrets: secrets))"
        case .notJSON:
            return "\(name) answered something that is not the expected JSON"
        case .missingField(let field):
            return "\(name) answered without the required field '\(field)'"
        case .noSuchPhoto(let id):
            return "\(name) has no photo '\(URLRedaction.redact(text: id))'"
        case .apiURLNotURL(let url):
            return "\(name) api_url is not a URL: \(URLRedaction.redact(url))"
        }
    }
}
