#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Steps through a JPEG's marker segments, from just after SOI up to the first scan.
///
/// The walk tolerates what libjpeg tolerates (fill bytes, junk between segments) and never
/// reads past the buffer: a segment whose length field has not arrived yet ends the walk
/// with `.needMore`, and a segment is returned with its declared payload range even when the
/// payload has only partly arrived, so an APPn of any size is skipped without being read.
struct JPEGMarkerWalker {
    /// One marker segment. `payload` follows the 2-byte length (empty for standalone markers).
    struct Segment {
        var marker: UInt8
        var offset: Int
        var payload: Range<Int>
    }

    enum Step {
        case segment(Segment)
        case needMore
    }

    let reader: ByteReader
    private(set) var offset = 2

    init(_ reader: ByteReader) { self.reader = reader }

    static let sos: UInt8 = 0xDA
    static let eoi: UInt8 = 0xD9

    /// Whether `marker` starts a frame (SOF0–3, 5–7, 9–11, 13–15), i.e. declares the size.
    static func isStartOfFrame(_ marker: UInt8) -> Bool {
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    /// Whether a start-of-frame marker is progressive (SOF2, 6, 10, 14).
    static func isProgressive(_ marker: UInt8) -> Bool {
        marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE
    }

    mutating func next() -> Step {
        // Find 0xFF, skip fill bytes, then read the marker code; 0xFF00 is junk, not a marker.
        while true {
            // memchr: the walk over a whole body steps over its entropy-coded data this way.
            if offset < reader.count && reader.bytes[offset] != 0xFF, let base = reader.bytes.baseAddress {
                let found = memchr(base + offset, 0xFF, reader.count - offset)
                offset = found.map { base.distance(to: UnsafeRawPointer($0)) } ?? reader.count
            }
            while offset + 1 < reader.count && reader.bytes[offset + 1] == 0xFF { offset += 1 }
            guard offset + 1 < reader.count else { return .needMore }
            let marker = reader.bytes[offset + 1]
            if marker == 0x00 {
                offset += 2
                continue
            }
            let start = offset
            if marker == 0x01 || (marker >= 0xD0 && marker <= 0xD9) {
                offset += 2
                return .segment(Segment(marker: marker, offset: start, payload: offset..<offset))
            }
            guard let length = reader.u16be(start + 2) else { return .needMore }
            guard length >= 2 else {
                // A length under 2 cannot be skipped; step over the marker like libjpeg's resync.
                offset += 2
                continue
            }
            offset = start + 2 + length
            return .segment(Segment(marker: marker, offset: start, payload: (start + 4)..<(start + 2 + length)))
        }
    }
}
