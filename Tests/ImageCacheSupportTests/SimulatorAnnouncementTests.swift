import Foundation
import ImageCacheSupport
import Testing

@Suite("SimulatorAnnouncement: the demo simulator's one line, written and read by one type", .timeLimit(.minutes(1)))
struct SimulatorAnnouncementTests {
    @Test("the line has sorted keys and unescaped slashes, and reads back to the same value")
    func roundTrip() throws {
        let announced = SimulatorAnnouncement(api: "http://127.0.0.1:4100", images: "http://127.0.0.1:4101",
                                              log: "http://127.0.0.1:4100/_log")
        let line = try announced.line()
        #expect(line == #"{"api":"http://127.0.0.1:4100","images":"http://127.0.0.1:4101","log":"http://127.0.0.1:4100/_log"}"#)
        #expect(try SimulatorAnnouncement(line: line) == announced)
    }

    @Test("a line of another shape is refused, not read with empty fields")
    func otherShapes() {
        for line in ["", "at 127.0.0.1:1", #"{"api":"http://a","images":"http://b"}"#, #"{"api":1,"images":"b","log":"c"}"#] {
            #expect(throws: (any Error).self, "\(line)") { try SimulatorAnnouncement(line: line) }
        }
    }
}
