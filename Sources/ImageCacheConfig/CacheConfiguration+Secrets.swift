extension CacheConfiguration {
    /// The environment variable (and systemd credential name) of each provider's key.
    package static let secretVariables: [(provider: String, variable: String)] = [
        ("unsplash", "UNSPLASH_ACCESS_KEY"), ("flickr", "FLICKR_API_KEY"), ("pixabay", "PIXABAY_API_KEY"),
    ]

    /// Replaces each provider's key by a better source when one has it, in the contract's
    /// order: a non-empty environment variable, then a non-empty systemd credential file
    /// `$CREDENTIALS_DIRECTORY/<variable>` (trailing whitespace and newline trimmed), then
    /// whatever the file said. Empty values count as unset, so an exported-but-empty
    /// variable does not hide the file's key.
    ///
    /// - Throws: `ConfigurationError` when a credential file exists but cannot be read.
    mutating func overlaySecrets(environment: [String: String]) throws(ConfigurationError) {
        for (provider, variable) in Self.secretVariables {
            let field: WritableKeyPath<CacheConfiguration, Provider> = switch provider {
            case "unsplash": \.unsplash
            case "flickr": \.flickr
            default: \.pixabay
            }
            if let value = environment[variable], !value.isEmpty {
                self[keyPath: field].apiKey = value
                self[keyPath: field].apiKeySource = .environment(variable: variable)
                continue
            }
            guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else { continue }
            let path = directory.hasSuffix("/") ? directory + variable : directory + "/" + variable
            let text: String
            do {
                text = try ConfigFileReader.contents(of: path)
            } catch .missing {
                continue
            } catch {
                throw ConfigFileReader.error(error, path: path)
            }
            var value = Substring(text)
            while let last = value.last, last.isWhitespace { value = value.dropLast() }
            guard !value.isEmpty else { continue }
            self[keyPath: field].apiKey = String(value)
            self[keyPath: field].apiKeySource = .credential(path: path)
        }
    }
}
