/// The one place where URLs lose their secrets before they are logged, put in an error or
/// used as a key (CONTRACT §7): Flickr and Pixabay carry API keys in query strings, and a
/// URL with credentials in its user-info part would leak them just the same.
public enum URLRedaction {
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
