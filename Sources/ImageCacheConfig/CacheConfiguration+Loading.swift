extension CacheConfiguration {
    /// Where `/etc` keeps the system-wide file; a parameter of `load` so tests can move it.
    public static let systemConfigPath = "/etc/imagecached/cache.conf"

    /// The files `load` tries, in order: `explicitPath` alone when given; otherwise the
    /// user's file (`$XDG_CONFIG_HOME` or `~/.config`) then the system one.
    package static func searchPaths(explicitPath: String?, environment: [String: String],
                                   systemConfigPath: String = systemConfigPath) -> [String] {
        if let explicitPath { return [explicitPath] }
        return [EnvironmentDefaults.userConfigPath(environment: environment), systemConfigPath]
    }

    /// The configuration the daemon runs with: the first file of `searchPaths` that exists
    /// (an explicit one must exist), parsed strictly, with secrets overlaid from the
    /// environment and `$CREDENTIALS_DIRECTORY`; the documented defaults when no file exists.
    ///
    /// A file that exists but cannot be read stops the look-up with an error rather than
    /// falling through to the next file, so a permissions mistake is never silently replaced
    /// by other settings. `sourcePath` says which file was used (nil: none).
    ///
    /// - Throws: `ConfigurationError`, whose description is `FILE:LINE: message`.
    public static func load(explicitPath: String?, environment: [String: String],
                            systemConfigPath: String = systemConfigPath) throws -> CacheConfiguration {
        for path in searchPaths(explicitPath: explicitPath, environment: environment, systemConfigPath: systemConfigPath) {
            let text: String
            do {
                text = try ConfigFileReader.contents(of: path)
            } catch .missing where explicitPath == nil {
                continue
            } catch {
                throw ConfigFileReader.error(error, path: path)
            }
            return try parse(text: text, path: path, environment: environment)
        }
        var configuration = CacheConfiguration(environment: environment)
        try configuration.overlaySecrets(environment: environment)
        return configuration
    }

    /// Parses cache.conf's text strictly (see the repository's cache.conf for the syntax),
    /// then overlays secrets from the environment and `$CREDENTIALS_DIRECTORY`.
    ///
    /// Every key not in the text keeps its default. The first problem stops the parse: an
    /// unknown section or key, a duplicate key or section, a line without `=`, a bad value,
    /// unit or quote, a value out of range.
    ///
    /// - Parameters:
    ///   - path: the file's name as it should appear in messages and `sourcePath`.
    ///   - environment: for secrets, `~` (`HOME`) and the defaults of unset paths.
    /// - Throws: `ConfigurationError` (`path:LINE: message`).
    public static func parse(text: String, path: String, environment: [String: String]) throws -> CacheConfiguration {
        var configuration = CacheConfiguration(environment: environment)
        configuration.sourcePath = path
        try ConfigFileParser(path: path, home: configuration.environmentDefaults.homeDirectory)
            .apply(text: text, to: &configuration)
        try configuration.overlaySecrets(environment: environment)
        return configuration
    }
}
