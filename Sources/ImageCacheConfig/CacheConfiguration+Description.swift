extension CacheConfiguration: CustomStringConvertible, CustomDebugStringConvertible {
    /// The configuration in cache.conf syntax, every key with its effective value and each
    /// API key as `"<redacted>"`: safe to log, and readable back by `parse` (secrets aside).
    public var description: String {
        var lines: [String] = []
        var section = ""
        for key in ConfigKey.all {
            if key.section != section {
                if !lines.isEmpty { lines.append("") }
                lines.append("[\(key.section)]")
                section = key.section
            }
            let value = key.render(self)
            lines.append(value.isEmpty ? "\(key.name) =" : "\(key.name) = \(value)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The same as `description`, preceded by the file it came from: never a secret.
    public var debugDescription: String {
        "# CacheConfiguration from \(sourcePath ?? "defaults")\n" + description
    }
}

extension CacheConfiguration.Provider: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `Provider(apiURL: …, apiKey: <redacted> from SOURCE)`: shows whether a key is set and
    /// where it came from, never the key.
    public var description: String {
        let key = apiKey == nil ? "nil" : "<redacted>" + (apiKeySource.map { " from \($0)" } ?? "")
        return "Provider(apiURL: \(apiURL), apiKey: \(key))"
    }

    /// The same as `description`.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the key redacted, so even reflection cannot leak it.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "apiKey": apiKey == nil ? "nil" : "<redacted>",
            "apiKeySource": apiKeySource.map { String(describing: $0) } ?? "nil",
            "apiURL": apiURL,
        ], displayStyle: .struct)
    }
}
