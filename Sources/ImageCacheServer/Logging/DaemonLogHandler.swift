#if canImport(Glibc)
import Glibc
#endif
import ImageCacheSupport
import Logging
import Synchronization

/// The daemon's log level, shared by every logger so that a SIGHUP reload of `log_level`
/// takes effect everywhere at once (swift-log copies a handler into each `Logger`).
public final class LogLevelControl: Sendable {
    private let index: Atomic<Int>

    public init(_ level: Logger.Level) {
        index = Atomic(Self.levels.firstIndex(of: level) ?? 2)
    }

    private static let levels = Logger.Level.allCases

    /// The level now; messages below it are not written.
    public var level: Logger.Level {
        get { Self.levels[index.load(ordering: .relaxed)] }
        set { index.store(Self.levels.firstIndex(of: newValue) ?? 2, ordering: .relaxed) }
    }
}

/// Writes one line per event to stderr: `time level label: message key=value…`, or under
/// systemd's journal `<priority>label: message key=value…`.
///
/// One line per event is a promise to whoever reads the journal or greps the output: line
/// breaks inside a message or a value are escaped, and each line is written by one `write`
/// so lines from different threads never interleave. Metadata is logfmt: `key=value`, the
/// value quoted (`key="a b"`) when it holds a space, a quote, a backslash or `=`, so a line
/// can be parsed by machine. Under systemd (`JOURNAL_STREAM` naming stderr) each line starts
/// with its syslog priority (`<3>` error … `<7>` debug, sd-daemon(3)) and has no timestamp
/// (the journal keeps its own), so `journalctl -p warning` selects by level. Colour only on a
/// terminal and without `NO_COLOR`. It logs what it is given; keeping secrets out is the
/// callers' rule (the daemon never puts a key into a message or metadata).
public struct DaemonLogHandler: LogHandler {
    /// How lines look, decided once from where stderr goes.
    public enum Style: Sendable, Equatable {
        /// A terminal: timestamp and a coloured level.
        case terminal
        /// A file or a pipe (or `NO_COLOR`): timestamp and the level as a word.
        case plain
        /// systemd's journal: a `<N>` priority prefix, no timestamp, no level word.
        case journal

        /// The style for this process's stderr: the journal when `JOURNAL_STREAM` names the
        /// very stream stderr is (its `device:inode`, as systemd.exec(5) says to check), else
        /// a terminal without `NO_COLOR` (or `TERM=dumb`), else plain.
        public static func detect(environment: [String: String], descriptor: Int32 = STDERR_FILENO) -> Style {
            var status = stat()
            if let stream = environment["JOURNAL_STREAM"], fstat(descriptor, &status) == 0,
               stream == "\(status.st_dev):\(status.st_ino)" {
                return .journal
            }
            let colourRefused = !(environment["NO_COLOR"] ?? "").isEmpty || environment["TERM"] == "dumb"
            return isatty(descriptor) == 1 && !colourRefused ? .terminal : .plain
        }
    }

    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let control: LogLevelControl
    private let style: Style

    /// - Parameters:
    ///   - label: the logger's label, written on each line.
    ///   - control: the shared level.
    ///   - style: how lines look (`Style.detect` for the process's stderr).
    public init(label: String, control: LogLevelControl, style: Style) {
        self.label = label
        self.control = control
        self.style = style
    }

    /// Makes every `Logger` of the process use this handler. Call once, first thing in main.
    public static func bootstrap(control: LogLevelControl, environment: [String: String]) {
        let style = Style.detect(environment: environment)
        LoggingSystem.bootstrap { label in DaemonLogHandler(label: label, control: control, style: style) }
    }

    public var logLevel: Logger.Level {
        get { control.level }
        set { control.level = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        if let error = event.error { merged["error"] = "\(error)" }
        var line = format(level: event.level, message: event.message.description, metadata: merged)
        line += "\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(STDERR_FILENO, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 {
                    if written < 0, errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    /// The line for one event, without its newline.
    func format(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        var line: String
        switch style {
        case .journal: line = "<\(Self.priority(level))>"
        case .terminal: line = Self.timestamp() + " " + Self.coloured(level) + " "
        case .plain: line = Self.timestamp() + " " + level.rawValue + " "
        }
        line += "\(label): "
        line += Self.oneLine(message)
        for key in metadata.keys.sorted() {
            line += " \(key)=\(Self.logfmtValue(metadata[key]!.description))"
        }
        return line
    }

    /// The syslog priority of a level (sd-daemon(3)'s `<N>` prefixes): the journal files each
    /// line under it, so `journalctl -p warning` shows warnings and worse.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// A logfmt value: as it is when it is a bare word, else in double quotes with `"` and
    /// `\\` escaped; line breaks and control characters escaped either way (`oneLine`).
    static func logfmtValue(_ text: String) -> String {
        let flat = oneLine(text)
        guard flat.isEmpty || flat.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" }) else { return flat }
        var quoted = "\""
        for character in flat {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// Escapes what would break the one-line rule (line breaks, other control characters).
    static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
        return text.rewritingScalars { scalar in
            switch scalar {
            case "\n": return "\\n"
            case "\r": return "\\r"
            case "\t": return "\\t"
            default:
                return scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : nil
            }
        }
    }

    private static func coloured(_ level: Logger.Level) -> String {
        let code: String
        switch level {
        case .trace, .debug: code = "2"
        case .info: code = "32"
        case .notice: code = "36"
        case .warning: code = "33"
        case .error, .critical: code = "31"
        }
        return "\u{1B}[\(code)m\(level.rawValue)\u{1B}[0m"
    }

    /// UTC, millisecond precision, ISO 8601: sortable and unambiguous across machines.
    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(now.tv_nsec / 1_000_000), 3))Z"
    }
}
