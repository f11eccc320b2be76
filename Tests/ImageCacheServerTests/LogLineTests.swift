@testable import ImageCacheServer
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
        let a = DaemonLogHandler(label: "a", control: control, colour: false)
        var b = DaemonLogHandler(label: "b", control: control, colour: false)
        b.logLevel = .debug
        #expect(a.logLevel == .debug)
        control.level = .error
        #expect(b.logLevel == .error)
    }
}
