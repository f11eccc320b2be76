import ImageCacheKit
import Testing
import TestSupport

/// The shared tier's record framing read as outside input: only an intact frame of the
/// expected kind and version gives its payload back; anything else is a miss, never a trap.
@Suite("Shared tier record frames", .timeLimit(.minutes(1)))
struct SharedRecordFrameTests {
    static let payload = Array(#"{"id":"pixabay:1234567"}"#.utf8)

    @Test("a frame reads back as its payload, and only as its own kind")
    func roundTrip() {
        let value = SharedRecordFrame.encode(.photo, payload: Self.payload)
        #expect(value.count == SharedRecordFrame.headerLength + Self.payload.count)
        #expect(SharedRecordFrame.decode(value, as: .photo) == Self.payload)
        #expect(SharedRecordFrame.decode(value, as: .searchPage) == nil)
        #expect(SharedRecordFrame.decode(SharedRecordFrame.encode(.searchPage, payload: []), as: .searchPage) == [])
    }

    @Test("every single-byte change, every truncation and any extra byte is a miss")
    func damageIsAMiss() {
        let value = SharedRecordFrame.encode(.searchPage, payload: Self.payload)
        for index in value.indices {
            var damaged = value
            damaged[index] ^= 0x5a
            #expect(SharedRecordFrame.decode(damaged, as: .searchPage) == nil, "byte \(index)")
        }
        for length in 0..<value.count {
            #expect(SharedRecordFrame.decode(Array(value.prefix(length)), as: .searchPage) == nil, "length \(length)")
        }
        #expect(SharedRecordFrame.decode(value + [0], as: .searchPage) == nil)
    }

    @Test("a declared length beyond the limit is refused before the checksum, and random bytes never trap")
    func hostileValues() {
        var huge = SharedRecordFrame.encode(.photo, payload: [])
        huge[5] = 0xff
        huge[6] = 0xff
        huge[7] = 0xff
        huge[8] = 0xff
        #expect(SharedRecordFrame.decode(huge, as: .photo) == nil)
        var random = SplitMix64(seed: 21)
        for _ in 0..<2000 {
            let count = Int(random.next() % 96)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            #expect(SharedRecordFrame.decode(Array("ICR".utf8) + [1, 2] + bytes, as: .photo) == nil)
        }
    }
}
