import Foundation

/// The one place where URLs and texts lose their secrets before they are logged, put in an
/// error, shown in `stats` or used as a cache key (docs/protocol.md, "Redirects and
/// credentials"): Flickr and Pixabay carry API keys in query strings, Unsplash in a header
/// that some proxies echo back, and a URL with credentials in its user-info part would leak
/// them just the same. The engine, the cache and the providers all call it, so there is a
/// single list of secret parameter names; it lives in the support target because none of
/// them owns it.
public enum URLRedaction {
    /// What a removed secret is replaced with.
    public static let placeholder = "REDACTED"

    /// Query keys (compared case-insensitively) whose values are secrets.
    public static let secretQueryKeys: Set<String> = [
        "key", "api_key", "apikey", "client_id", "client_secret", "access_key", "accesskey",
        "secret", "token", "access_token", "auth", "signature", "sig", "password",
    ]

    /// The URL with every secret query value and any user-info replaced by `REDACTED`.
    /// Everything else (scheme, host, path, other parameters, fragment) is kept as written so a
    /// redacted URL still says which request it was.
    public static func redact(_ url: String) -> String {
        var result = url
        if let schemeEnd = result.range(of: "://") {
            let authorityStart = schemeEnd.upperBound
            let authorityEnd = result[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? result.endIndex
            if let at = result[authorityStart..<authorityEnd].lastIndex(of: "@") {
                result.replaceSubrange(authorityStart..<at, with: "REDACTED")
            }
        }
        guard let question = result.firstIndex(of: "?") else { return result }
        let fragmentStart = result[question...].firstIndex(of: "#") ?? result.endIndex
        let query = result[result.index(after: question)..<fragmentStart]
        let redacted = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let eq = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<eq].removingPercentEncodingLossy().lowercased()
            return secretQueryKeys.contains(name) ? String(pair[...eq]) + "REDACTED" : String(pair)
        }.joined(separator: "&")
        result.replaceSubrange(result.index(after: question)..<fragmentStart, with: redacted)
        return result
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

    /// Request headers (lower-case names) whose values are credentials: redacted in logs, and
    /// never sent on to another origin by a redirect (docs/protocol.md, "Redirects and credentials").
    public static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "x-api-key"]

    /// Header pairs fit for a log: `Authorization` and the like keep their name only.
    public static func redact(headers: [(String, String)]) -> [(String, String)] {
        headers.map { name, value in
            credentialHeaders.contains(name.lowercased()) ? (name, placeholder) : (name, value)
        }
    }

    /// The secret values a request carries: the values of its secret query parameters (Flickr's
    /// `api_key`, Pixabay's `key`) and the words of its credential headers (`Client-ID <key>`),
    /// those of at least 4 characters. What a redirect to another origin must not pass on.
    public static func secrets(url: String, headers: [(String, String)]) -> [String] {
        var found: [String] = []
        if let question = url.firstIndex(of: "?") {
            let query = url[url.index(after: question)...].prefix { $0 != "#" }
            for pair in query.split(separator: "&") {
                guard let eq = pair.firstIndex(of: "=") else { continue }
                let name = pair[..<eq].removingPercentEncodingLossy().lowercased()
                let value = pair[pair.index(after: eq)...].removingPercentEncodingLossy()
                if secretQueryKeys.contains(name), value.count >= 4 { found.append(value) }
            }
        }
        for (name, value) in headers where credentialHeaders.contains(name.lowercased()) {
            found += value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == ";" || $0 == "=" })
                .map(String.init).filter { $0.count >= 4 }
        }
        return found
    }

    /// `url` without the query parameters whose (percent-decoded) value contains one of
    /// `secrets`: how a redirect to another origin is stripped of the keys a hostile first host
    /// copied into its `Location`. Other parameters (a CDN's own signature) are kept as written.
    public static func removingParameters(carrying secrets: [String], from url: String) -> String {
        let secrets = secrets.filter { $0.count >= 4 }
        guard !secrets.isEmpty, let question = url.firstIndex(of: "?") else { return url }
        let fragmentStart = url[question...].firstIndex(of: "#") ?? url.endIndex
        let query = url[url.index(after: question)..<fragmentStart]
        let kept = query.split(separator: "&", omittingEmptySubsequences: false).filter { pair in
            let value = pair.removingPercentEncodingLossy()
            return !secrets.contains { value.contains($0) }
        }
        let head = url[..<question]
        let tail = url[fragmentStart...]
        return kept.isEmpty ? String(head + tail) : String(head) + "?" + kept.joined(separator: "&") + tail
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
            if secretQueryKeys.contains(name) {
                let end = rest.firstIndex { "&#; \t\r\n\"'<>".contains($0) } ?? rest.endIndex
                if end > rest.startIndex { result += placeholder }
                rest = rest[end...]
            }
        }
        result += rest
        return result
    }
}

extension Substring {
    /// Percent-decoding good enough to compare a query key (`api%5Fkey` is still `api_key`).
    fileprivate func removingPercentEncodingLossy() -> String {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
               let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
