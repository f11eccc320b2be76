import Foundation

/// Builds provider URLs with `URLComponents`, never by pasting strings, so that a query such
/// as `cats & dogs #1 +more 🐈 café` reaches the provider exactly as typed.
///
/// `URLComponents` percent-encodes `&`, `#`, spaces and non-ASCII in query values but leaves
/// `+` alone, and most servers (PHP, Rails, Flickr's) read a bare `+` as a space; so `+` is
/// encoded as `%2B` afterwards. Keys go in through the same path and are redacted by
/// `URLRedaction` before a URL is shown anywhere.
enum URLBuilding {
    /// `base` + extra path + query items, or nil when `base` is not a URL.
    static func url(base: String, appendingPath path: String = "", query: [(String, String)]) -> String? {
        guard var components = URLComponents(string: base), components.scheme != nil, components.host != nil else {
            return nil
        }
        if !path.isEmpty {
            var basePath = components.path
            if basePath.hasSuffix("/") { basePath.removeLast() }
            components.path = basePath + (path.hasPrefix("/") ? path : "/" + path)
        }
        if !query.isEmpty {
            components.queryItems = (components.queryItems ?? []) + query.map { URLQueryItem(name: $0.0, value: $0.1) }
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        }
        return components.string
    }

    /// Appends query items to an absolute URL (attribution parameters on Unsplash links).
    static func appending(_ query: [(String, String)], to url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        let names = Set(query.map(\.0))
        components.queryItems = (components.queryItems ?? []).filter { !names.contains($0.name) }
            + query.map { URLQueryItem(name: $0.0, value: $0.1) }
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.string ?? url
    }

    /// Whether an id is safe to put in a URL path segment as it is (letters, digits, `_`, `-`).
    static func isPlainIdentifier(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 64 && id.unicodeScalars.allSatisfy {
            ($0.isASCII && (CharacterSet.alphanumerics.contains($0))) || $0 == "_" || $0 == "-"
        }
    }
}
