import Glibc
@testable import ImageCacheServer
import Logging
import Testing

@Suite("Log lines", .timeLimit(.minutes(1)))
struct LogLineTests {
    @Test("line breaks and control characters are escaped, so one event is one line")
    func oneLine() {
        #expect(DaemonLogHandler.oneLine("a\nb\rc\td\u{1B}[31m") == #"a\nb\rc\td\u{1b}[31m"#)
        #expect(DaemonLogHandler.oneLine("plain ü") == "plain ü")
    }

    @Test("the log level is shared, so a reload changes it for every logger")
    func sharedLevel() {
        let control = LogLevelControl(.info)
        let a = DaemonLogHandler(label: "a", control: control, style: .plain)
        var b = DaemonLogHandler(label: "b", control: control, style: .plain)
        b.logLevel = .debug
        #expect(a.logLevel == .debug)
        control.level = .error
        #expect(b.logLevel == .error)
    }

    @Test("metadata is logfmt: bare words as they are, anything else quoted and escaped")
    func logfmt() {
        #expect(DaemonLogHandler.logfmtValue("dl-3f9a") == "dl-3f9a")
        #expect(DaemonLogHandler.logfmtValue("/srv/a b.jpg") == #""/srv/a b.jpg""#)
        #expect(DaemonLogHandler.logfmtValue(#"say "hi"\"#) == #""say \"hi\"\\""#)
        #expect(DaemonLogHandler.logfmtValue("k=v") == #""k=v""#)
        #expect(DaemonLogHandler.logfmtValue("") == #""""#)
        // The escaped line break holds a backslash, so the value is quoted (and the backslash escaped).
        #expect(DaemonLogHandler.logfmtValue("two\nlines") == #""two\\nlines""#)
    }

    @Test("under the journal: a syslog priority prefix per level and no timestamp; elsewhere a timestamp and the level")
    func journalStyle() {
        let control = LogLevelControl(.trace)
        let journal = DaemonLogHandler(label: "imagecached", control: control, style: .journal)
        #expect(journal.format(level: .warning, message: "slow", metadata: ["job": "dl-1", "path": "/a b"])
            == #"<4>imagecached: slow job=dl-1 path="/a b""#)
        let priorities = [Logger.Level.trace, .debug, .info, .notice, .warning, .error, .critical].map(DaemonLogHandler.priority)
        #expect(priorities == [7, 7, 6, 5, 4, 3, 2])
        let plain = DaemonLogHandler(label: "imagecached", control: control, style: .plain)
        let line = plain.format(level: .info, message: "serving", metadata: [:])
        #expect(line.hasSuffix("Z info imagecached: serving"))
        #expect(line.first?.isNumber == true)
        #expect(!line.contains("\u{1B}"))
    }

    @Test("the style follows where stderr goes: JOURNAL_STREAM naming it, else plain on a pipe")
    func styleDetection() {
        var pipe: [Int32] = [0, 0]
        #expect(Glibc.pipe(&pipe) == 0)
        defer { close(pipe[0]); close(pipe[1]) }
        var status = stat()
        #expect(fstat(pipe[1], &status) == 0)
        let named = "\(status.st_dev):\(status.st_ino)"
        #expect(DaemonLogHandler.Style.detect(environment: ["JOURNAL_STREAM": named], descriptor: pipe[1]) == .journal)
        // A JOURNAL_STREAM inherited by a process whose stderr was redirected elsewhere.
        #expect(DaemonLogHandler.Style.detect(environment: ["JOURNAL_STREAM": "1:2"], descriptor: pipe[1]) == .plain)
        #expect(DaemonLogHandler.Style.detect(environment: [:], descriptor: pipe[1]) == .plain)
        // (A terminal gets colour unless NO_COLOR or TERM=dumb: `isatty` decides; no pty here.)
    }
}
