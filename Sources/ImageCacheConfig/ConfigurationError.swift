/// A problem with the configuration that stops start-up (or that a SIGHUP reload reports
/// while the running configuration is kept).
///
/// `description` is exactly `FILE:LINE: message` — the form compilers use, so editors jump to
/// the line and `imagecached --check-config` can print it as it is — or `FILE: message` when
/// the problem is not on one line (an unreadable file, an unreadable systemd credential).
/// The message names the key and its section (`unknown key 'x' in [network]`) and never
/// contains the value of a secret.
package struct ConfigurationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file the problem is in, as it was named (`--config` argument or look-up path).
    public var path: String
    /// 1-based line number, or nil when the problem concerns the whole file.
    public var line: Int?
    /// The section the offending line is in (`network`, `providers.flickr`), when known.
    package var section: String?
    /// The key concerned, when the problem is about one key.
    public var key: String?
    /// What is wrong, for a person; names the key and section itself.
    public var message: String

    /// Creates an error; `message` must already name the key and section.
    public init(path: String, line: Int?, section: String? = nil, key: String? = nil, message: String) {
        self.path = path
        self.line = line
        self.section = section
        self.key = key
        self.message = message
    }

    /// `FILE:LINE: message`, or `FILE: message` without a line.
    public var description: String {
        if let line { return "\(path):\(line): \(message)" }
        return "\(path): \(message)"
    }
}
