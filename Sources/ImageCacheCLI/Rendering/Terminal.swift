import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the CLI knows about where its output goes.
///
/// Renderers take these values as parameters (so tests choose them); only commands read the
/// real terminal through `Terminal.current()`.
public struct Terminal: Sendable, Equatable {
    /// Whether stdout is a terminal: progress bars redraw in place only then.
    public var isTTY: Bool
    /// Columns available for a line.
    public var width: Int

    /// The width used when neither the terminal nor `COLUMNS` says.
    public static let fallbackWidth = 100

    /// The width: the terminal's (`TIOCGWINSZ`) when stdout is one, else `COLUMNS`, else 100.
    public static func width(isTTY: Bool, windowColumns: Int?, environment: [String: String]) -> Int {
        if isTTY, let columns = windowColumns, columns > 0 { return columns }
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        return fallbackWidth
    }

    /// A width no line reaches: what a table is fitted to when nothing should be cut. Far
    /// below `Int.max`, so the renderers' sums and differences of widths cannot overflow.
    public static let unlimited = 1 << 40

    /// The width a table is fitted to: the terminal's when stdout is one; unlimited otherwise
    /// (a pipe, a file), since a cut row there loses data a script or a pager wanted.
    public var tableWidth: Int { isTTY ? width : Self.unlimited }

    /// The real stdout, where results (tables, summaries, JSON) go.
    public static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> Terminal {
        of(STDOUT_FILENO, environment: environment)
    }

    /// The real stderr, where progress bars and narration go: bars redraw in place only
    /// when it is a terminal, so `imagecache download X > list.txt` still shows them.
    public static func progress(environment: [String: String] = ProcessInfo.processInfo.environment) -> Terminal {
        of(STDERR_FILENO, environment: environment)
    }

    /// `fd`'s terminal, when it is one.
    static func of(_ fd: Int32, environment: [String: String]) -> Terminal {
        let tty = isatty(fd) == 1
        var columns: Int?
        if tty {
            var size = winsize()
            if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0 { columns = Int(size.ws_col) }
        }
        return Terminal(isTTY: tty, width: width(isTTY: tty, windowColumns: columns, environment: environment))
    }
}

/// How much a command says besides its result: `-q` results only, `-v` more narration.
public enum Verbosity: Int, Sendable, Comparable {
    /// `-q`: stdout's results and stderr's error messages, nothing else.
    case quiet
    /// Progress bars and narration on stderr.
    case normal
    /// Also which socket was chosen and why, and how long each call took.
    case verbose

    public static func < (lhs: Verbosity, rhs: Verbosity) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Writes to stdout and stderr without Swift's `print` buffering surprises: a progress bar
/// must appear before the next network wait, and errors must never be lost at exit.
public enum Output {
    /// When set, what would go to stdout goes to stderr: `demo --json` keeps stdout for its
    /// JSON report while the narrative still shows. Inherited by child tasks.
    @TaskLocal public static var narrativeToStderr = false

    /// Writes `text` to stdout at once (stderr under `narrativeToStderr`).
    public static func out(_ text: String) {
        write(text, to: narrativeToStderr ? STDERR_FILENO : STDOUT_FILENO)
    }

    /// Writes all of `text` with write(2). A reader that went away (`imagecache search … |
    /// head`) is not an error worth a crash: the rest of the output is dropped and the
    /// command carries on, so the demo still stops its daemon and removes its files.
    /// (FileHandle.write would trap on EPIPE.)
    static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// The command's `-q`/`-v`, set by `ClientCommand.run` for everything it calls.
    @TaskLocal public static var verbosity = Verbosity.normal

    /// Writes a line of a result to stdout.
    public static func line(_ text: String = "") { out(text + "\n") }

    /// Writes progress (bars, their redraws) to stderr, unless `-q`.
    public static func progress(_ text: String) {
        if verbosity > .quiet, !text.isEmpty { write(text, to: STDERR_FILENO) }
    }

    /// Writes a line of narration (what was started, what to do next) to stderr, unless `-q`.
    public static func note(_ text: String) {
        if verbosity > .quiet { write(text + "\n", to: STDERR_FILENO) }
    }

    /// Writes a line to stderr only under `-v`.
    public static func detail(_ text: String) {
        if verbosity >= .verbose { write("imagecache: " + text + "\n", to: STDERR_FILENO) }
    }

    /// Writes a line of a command's narrative (stdout, or stderr under `narrativeToStderr`).
    public static func narrate(_ text: String) { out(text + "\n") }

    /// Writes a line to stderr.
    public static func error(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }
}
