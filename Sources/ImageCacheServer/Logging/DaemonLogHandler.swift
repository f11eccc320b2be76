#if canImport(Glibc)
import Glibc
#endif
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

/// Writes one line per event to stderr: `time level label: message key=value…`.
///
/// One line per event is a promise to whoever reads the journal or greps the output: line
/// breaks inside a message or a value are escaped, and each line is written by one `write`
/// so lines from different threads never interleave. Colour only when stderr is a terminal
/// (a journal or a file gets plain text). It logs what it is given; keeping secrets out is
/// the callers' rule (the daemon never puts a key into a message or metadata).
public struct DaemonLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let control: LogLevelControl
    private let colour: Bool

    /// - Parameters:
    ///   - label: the logger's label, written on each line.
    ///   - control: the shared level.
    ///   - colour: nil decides by whether stderr is a terminal.
    public init(label: String, control: LogLevelControl, colour: Bool? = nil) {
        self.label = label
        self.control = control
        self.colour = colour ?? (isatty(STDERR_FILENO) == 1)
    }

    /// Makes every `Logger` of the process use this handler. Call once, first thing in main.
    public static func bootstrap(control: LogLevelControl) {
        LoggingSystem.bootstrap { label in DaemonLogHandler(label: label, control: control) }
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
        var line = Self.timestamp()
        line += " "
        line += colour ? Self.coloured(event.level) : event.level.rawValue
        line += " \(label): "
        line += Self.oneLine(event.message.description)
        for key in merged.keys.sorted() {
            line += " \(key)=\(Self.oneLine(merged[key]!.description))"
        }
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

    /// Escapes what would break the one-line rule (line breaks, other control characters).
    static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
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
