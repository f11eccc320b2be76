import Foundation

/// Removes credentials from URLs and texts before they are logged, put in an error, shown in
/// `stats` or used as a cache key (CONTRACT §7).
///
/// Flickr and Pixabay carry their keys in the query string (`api_key=`, `key=`), Unsplash in a
/// header that some proxies echo back, and any URL may carry `user:password@`. This is the
/// Providers' one place for it; the network engine's redaction (Network/) should call into, or
/// replace, this one so there is a single list of secret parameter names.
public enum URLRedaction {
    /// Query parameter names whose values are secrets, compared case-insensitively.
    public static let secretParameterNames: Set<String> = [
        "key", "api_key", "apikey", "client_id", "access_key", "access_token", "token",
        "secret", "client_secret", "signature", "sig", "password", "auth",
    ]

    /// What a removed secret is replaced with.
    public static let placeholder = "REDACTED"

    /// The URL with secret query values and userinfo replaced; a text that does not parse as a
    /// URL is scrubbed as text instead (so even a malformed URL never leaks a key).
    public static func redact(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.scheme != nil else {
            return redactParameters(in: url)
        }
        if components.user != nil || components.password != nil {
            components.user = nil
            components.password = nil
        }
        if let items = components.percentEncodedQueryItems {
            components.percentEncodedQueryItems = items.map { item in
                secretParameterNames.contains(item.name.lowercased()) && item.value != nil
                    ? URLQueryItem(name: item.name, value: placeholder) : item
            }
        }
        return components.string ?? redactParameters(in: url)
    }

    /// A free text (an error body, a message) with every known secret value (as is and
    /// percent-encoded) and every `name=value` pair of a secret parameter replaced. Secrets
    /// shorter than 4 characters are not searched for: they would match ordinary words, and no
    /// provider issues keys that short.
    public static func redact(text: String, secrets: [String] = []) -> String {
        var out = text
        for secret in secrets where secret.count >= 4 {
            out = out.replacingOccurrences(of: secret, with: placeholder)
            let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret
            if encoded != secret { out = out.replacingOccurrences(of: encoded, with: placeholder) }
        }
        return redactParameters(in: out)
    }

    /// Header pairs fit for a log: `Authorization` and the like keep their name only.
    public static func redact(headers: [(String, String)]) -> [(String, String)] {
        headers.map { name, value in
            ["authorization", "proxy-authorization", "cookie", "x-api-key"].contains(name.lowercased())
                ? (name, placeholder) : (name, value)
        }
    }

    /// Replaces `name=value` for secret names anywhere in a text (URLs inside messages, bodies).
    static func redactParameters(in text: String) -> String {
        var result = ""
        result.reserveCapacity(text.count)
        var rest = Substring(text)
        while let eq = rest.firstIndex(of: "=") {
            // The parameter name is the run of name characters right before "=".
            var nameStart = eq
            while nameStart > rest.startIndex {
                let before = rest.index(before: nameStart)
                let c = rest[before]
                guard c.isLetter || c.isNumber || c == "_" || c == "-" else { break }
                nameStart = before
            }
            let name = rest[nameStart..<eq].lowercased()
            result += rest[rest.startIndex...eq]
            rest = rest[rest.index(after: eq)...]
            if secretParameterNames.contains(name) {
                let end = rest.firstIndex { "&#; \t\r\n\"'<>".contains($0) } ?? rest.endIndex
                if end > rest.startIndex { result += placeholder }
                rest = rest[end...]
            }
        }
        result += rest
        return result
    }
}
