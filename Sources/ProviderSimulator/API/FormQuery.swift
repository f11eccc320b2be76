import Foundation

/// Reads a request's query string the way real API servers do (PHP, Rails, Flickr): `+` is a
/// space and `%XX` is a byte, so a client that leaves `+` unescaped gets "c  code" for "c++
/// code" here exactly as it would upstream.
public enum FormQuery {
    /// Every `name=value` pair of the URI's query, decoded, in order.
    public static func items(of uri: String) -> [(String, String)] {
        guard let q = uri.split(separator: "?", maxSplits: 1).dropFirst().first else { return [] }
        return q.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// The first value of `name`, decoded.
    public static func value(_ name: String, in uri: String) -> String? {
        items(of: uri).first { $0.0 == name }?.1
    }

    static func decode(_ s: Substring) -> String {
        let spaced = s.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
