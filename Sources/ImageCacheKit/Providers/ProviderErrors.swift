import Foundation
import ImageCacheProtocol

/// The error values providers throw (`ProviderError`), built in one place so every body
/// excerpt is bounded and redacted with the provider's secrets before it is kept.
enum ProviderErrors {
    /// How much of an upstream body an error may quote.
    static let excerptLimit = 200

    /// No key configured: names the config key and the environment variable to set.
    static func missingKey(_ provider: ProviderID) -> ProviderError {
        ProviderError(provider, .missingKey)
    }

    /// The provider refused the configured key.
    static func keyRefused(_ provider: ProviderID, status: Int, body: [UInt8], secrets: [String]) -> ProviderError {
        ProviderError(provider, .keyRefused, status: status, body: excerpt(body, secrets: secrets), secrets: secrets)
    }

    static func rateLimited(_ provider: ProviderID, retryAfter: Double?, status: Int? = nil) -> ProviderError {
        let retryAfter = retryAfter.flatMap(OutsideSeconds.clamped)
        return ProviderError(provider, .rateLimited(stated: retryAfter), status: status, retryAfter: retryAfter)
    }

    static func upstream(_ provider: ProviderID, status: Int, detail: String, body: [UInt8], secrets: [String]) -> ProviderError {
        ProviderError(provider, .upstream(detail: detail), status: status, body: excerpt(body, secrets: secrets), secrets: secrets)
    }

    static func notJSON(_ provider: ProviderID, status: Int, body: [UInt8], secrets: [String]) -> ProviderError {
        ProviderError(provider, .notJSON, status: status, body: excerpt(body, secrets: secrets), secrets: secrets)
    }

    static func missingField(_ provider: ProviderID, field: String, status: Int, body: [UInt8], secrets: [String]) -> ProviderError {
        ProviderError(provider, .missingField(field), status: status, body: excerpt(body, secrets: secrets), secrets: secrets)
    }

    static func notFound(_ provider: ProviderID, id: String) -> ProviderError {
        ProviderError(provider, .noSuchPhoto(id: id))
    }

    /// The configured `api_url` cannot be parsed (redacted in the message).
    static func apiURLNotURL(_ provider: ProviderID, _ url: String) -> ProviderError {
        ProviderError(provider, .apiURLNotURL(url))
    }

    /// The start of a body as text, redacted, control characters flattened, at most
    /// `excerptLimit` characters: enough to diagnose, never a whole page or a key.
    static func excerpt(_ body: [UInt8], secrets: [String]) -> String {
        let prefix = body.prefix(excerptLimit * 4)
        var text = String(decoding: prefix, as: UTF8.self)
        text = String(text.unicodeScalars.map { CharacterSet.controlCharacters.contains($0) ? " " : Character($0) })
        text = URLRedaction.redact(text: text, secrets: secrets)
        if text.count > excerptLimit { text = String(text.prefix(excerptLimit)) + "…" }
        return text
    }

    /// A transport or provider error from the fetcher with any secret scrubbed from its texts.
    static func scrub(_ error: any Error, secrets: [String]) -> any Error {
        if var transfer = error as? TransferError {
            transfer.secrets += secrets
            return transfer
        }
        if var provider = error as? ProviderError {
            provider.secrets += secrets
            provider.body = provider.body.map { URLRedaction.redact(text: $0, secrets: secrets) }
            return provider
        }
        return error
    }

    /// `Retry-After` in seconds, clamped (`RetryPolicy.parseRetryAfter`, the one parser).
    static func retryAfter(_ response: HTTPResponse) -> Double? {
        RetryPolicy.parseRetryAfter(response.header("Retry-After"))
    }
}
