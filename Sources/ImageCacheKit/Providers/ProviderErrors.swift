import Foundation
import ImageCacheProtocol

/// The error values providers throw, built in one place so every message names the provider,
/// says what to do, and never carries a key.
enum ProviderErrors {
    /// How much of an upstream body an error may quote.
    static let excerptLimit = 200

    /// No key configured: names the config key and the environment variable to set.
    static func missingKey(_ provider: ProviderID) -> RPCError {
        RPCError(.providerUnavailable,
                 "\(provider.displayName) has no API key: set \(provider.configKey) in cache.conf or the \(provider.environmentVariable) environment variable")
    }

    /// The provider refused the configured key.
    static func keyRefused(_ provider: ProviderID, status: Int, body: [UInt8], secrets: [String]) -> RPCError {
        RPCError(.providerUnavailable,
                 "\(provider.displayName) refused the configured API key (check \(provider.configKey) or \(provider.environmentVariable))",
                 status: status, body: excerpt(body, secrets: secrets))
    }

    static func rateLimited(_ provider: ProviderID, retryAfter: Double?, status: Int? = nil) -> RPCError {
        var message = "\(provider.displayName) rate limit reached"
        let retryAfter = retryAfter.flatMap(OutsideSeconds.clamped)
        if let retryAfter { message += "; retry in \(OutsideSeconds.wholeSeconds(retryAfter)) s" }
        return RPCError(.rateLimited, message, status: status, retryAfter: retryAfter)
    }

    static func upstream(_ provider: ProviderID, status: Int, detail: String, body: [UInt8], secrets: [String]) -> RPCError {
        RPCError(.upstreamError, "\(provider.displayName) answered an error: \(URLRedaction.redact(text: detail, secrets: secrets))",
                 status: status, body: excerpt(body, secrets: secrets))
    }

    static func notJSON(_ provider: ProviderID, status: Int, body: [UInt8], secrets: [String]) -> RPCError {
        RPCError(.upstreamError, "\(provider.displayName) answered something that is not the expected JSON",
                 status: status, body: excerpt(body, secrets: secrets))
    }

    static func missingField(_ provider: ProviderID, field: String, status: Int, body: [UInt8], secrets: [String]) -> RPCError {
        RPCError(.upstreamError, "\(provider.displayName) answered without the required field '\(field)'",
                 status: status, body: excerpt(body, secrets: secrets))
    }

    static func notFound(_ provider: ProviderID, id: String) -> RPCError {
        RPCError(.notFound, "\(provider.displayName) has no photo '\(URLRedaction.redact(text: id))'")
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

    /// A transport error from the fetcher with any secret scrubbed from its texts.
    static func scrub(_ error: any Error, secrets: [String]) -> any Error {
        if var transfer = error as? TransferError {
            transfer.secrets += secrets
            return transfer
        }
        guard var rpc = error as? RPCError else { return error }
        rpc.message = URLRedaction.redact(text: rpc.message, secrets: secrets)
        rpc.data.body = rpc.data.body.map { URLRedaction.redact(text: $0, secrets: secrets) }
        return rpc
    }

    /// `Retry-After` in seconds, clamped (`RetryPolicy.parseRetryAfter`, the one parser).
    static func retryAfter(_ response: HTTPResponse) -> Double? {
        RetryPolicy.parseRetryAfter(response.header("Retry-After"))
    }
}
