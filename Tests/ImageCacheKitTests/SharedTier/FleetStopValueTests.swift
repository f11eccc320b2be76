@testable import ImageCacheKit
import Testing

/// A fleet stop read from the tier is outside input: only a stop frame holding a finite,
/// non-negative number stops anything.
@Suite("Fleet stop values", .timeLimit(.minutes(1)))
struct FleetStopValueTests {
    static func frame(_ text: String, kind: SharedRecordFrame.Kind = .fleetStop) -> [UInt8] {
        SharedRecordFrame.encode(kind, payload: Array(text.utf8))
    }

    @Test func aStopFrameGivesItsTime() {
        #expect(FleetBudget.decodeStop(Self.frame("1795000000.5")) == 1_795_000_000.5)
    }

    @Test("anything else is no stop", arguments: ["nan", "inf", "-inf", "-5", "", "12abc", "1e400", String(repeating: "9", count: 100)])
    func hostileStops(text: String) {
        #expect(FleetBudget.decodeStop(Self.frame(text)) == nil)
    }

    @Test func anotherKindOrRawTextIsNoStop() {
        #expect(FleetBudget.decodeStop(Self.frame("1795000000", kind: .photo)) == nil)
        #expect(FleetBudget.decodeStop(Array("1795000000".utf8)) == nil)
    }
}
