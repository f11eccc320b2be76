#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `JPEGMarkerWalker`'s walk, over a body that arrives in chunks: the same segments, in the
/// same order, handed to a `JPEGScanSurvey` as they complete, so a body verified while it
/// downloads is judged by the very survey a whole-file validation builds (scan and work
/// limits, completeness, the first scan, EOI).
///
/// It keeps only the payloads the survey reads (the frame header, each scan header, the
/// quantization tables and the JFIF and Adobe markers, at most 64 KiB each); every other segment and all entropy-coded data is stepped over by
/// length or with `memchr`. Byte-at-a-time feeding walks exactly as one whole buffer does.
struct JPEGStreamWalker {
    private enum State {
        /// Looking for the next 0xFF.
        case scanning
        /// A 0xFF at this offset; the next byte decides (fill byte, stuffed zero, marker).
        case afterFF(Int)
        /// A marker with a length field at `start`; `high` once its first byte arrived.
        case length(marker: UInt8, start: Int, high: UInt8?)
        /// Inside a segment's payload, `remaining` bytes still to come.
        case payload(JPEGMarkerWalker.Segment, remaining: Int)
        /// EOI, or a segment the survey could not use: nothing after it is walked.
        case ended
    }

    private var state = State.scanning
    /// The payload being kept (`JPEGScanSurvey.readsPayload`).
    private var kept: [UInt8] = []
    private var keeping = false
    /// Bytes walked so far, i.e. the absolute offset of the next chunk's first byte.
    private(set) var count = 0
    /// The survey of the segments so far (call `end()` at the end of the body).
    private(set) var survey = JPEGScanSurvey()
    /// Offset of the last FF D9 pair anywhere in the body (`JPEGMetadata.hasEndOfImage` looks
    /// for one after the first scan; the last one is after it whenever any is).
    private(set) var lastEndOfImage: Int?
    private var lastByteWasFF = false

    /// Whether an EOI follows the first scan, as `JPEGMetadata.hasEndOfImage` decides it.
    var hasEndOfImage: Bool {
        guard let scan = survey.firstScanOffset, let end = lastEndOfImage else { return false }
        return end > scan
    }

    /// Walks the next chunk of the body.
    mutating func consume(_ chunk: UnsafeRawBufferPointer) {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        trackEndOfImage(chunk, base: base)
        let origin = count
        count += chunk.count
        // The walk starts after SOI, as `JPEGMarkerWalker` does.
        var index = max(0, 2 - origin)
        while index < chunk.count {
            switch state {
            case .ended:
                return
            case .scanning:
                if chunk[index] != 0xFF {
                    guard let found = memchr(base + index, 0xFF, chunk.count - index) else { return }
                    index = base.distance(to: UnsafeRawPointer(found))
                }
                state = .afterFF(origin + index)
                index += 1
            case .afterFF(let start):
                let marker = chunk[index]
                index += 1
                if marker == 0xFF {
                    state = .afterFF(origin + index - 1)
                } else if marker == 0x00 {
                    state = .scanning
                } else if marker == 0x01 || (marker >= 0xD0 && marker <= 0xD9) {
                    let empty = (start + 2)..<(start + 2)
                    deliver(JPEGMarkerWalker.Segment(marker: marker, offset: start, payload: empty), bytes: [])
                } else {
                    state = .length(marker: marker, start: start, high: nil)
                }
            case .length(let marker, let start, let high):
                let byte = chunk[index]
                index += 1
                guard let high else {
                    state = .length(marker: marker, start: start, high: byte)
                    continue
                }
                let length = Int(high) << 8 | Int(byte)
                // Under 2 cannot be skipped: the walk steps over the marker and goes on from
                // the length field, whose bytes (0x00, 0x00/0x01) hold no 0xFF.
                guard length >= 2 else {
                    state = .scanning
                    continue
                }
                let segment = JPEGMarkerWalker.Segment(marker: marker, offset: start,
                                                       payload: (start + 4)..<(start + 2 + length))
                keeping = survey.readsPayload(of: marker)
                kept.removeAll(keepingCapacity: true)
                if length == 2 {
                    deliver(segment, bytes: [])
                } else {
                    state = .payload(segment, remaining: length - 2)
                }
            case .payload(let segment, let remaining):
                let take = min(remaining, chunk.count - index)
                if keeping { kept.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[index..<(index + take)])) }
                index += take
                if take == remaining {
                    deliver(segment, bytes: keeping ? kept : [])
                } else {
                    state = .payload(segment, remaining: remaining - take)
                }
            }
        }
    }

    /// Ends the walk at the end of the body: a segment cut short ends it as in a whole-file
    /// walk, and the survey counts the last scan's data and the output pass.
    mutating func end() {
        if case .payload(let segment, _) = state {
            survey.visit(segment, payload: nil)
        }
        state = .ended
        survey.end(bodyLength: count)
    }

    private mutating func deliver(_ segment: JPEGMarkerWalker.Segment, bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in survey.visit(segment, payload: ByteReader(raw)) }
        state = survey.walkEnded ? .ended : .scanning
    }

    private mutating func trackEndOfImage(_ chunk: UnsafeRawBufferPointer, base: UnsafeRawPointer) {
        if lastByteWasFF && chunk[0] == 0xD9 { lastEndOfImage = count - 1 }
        var index = 0
        while index < chunk.count, let found = memchr(base + index, 0xFF, chunk.count - index) {
            let at = base.distance(to: UnsafeRawPointer(found))
            if at + 1 < chunk.count && chunk[at + 1] == 0xD9 { lastEndOfImage = count + at }
            index = at + 1
        }
        lastByteWasFF = chunk[chunk.count - 1] == 0xFF
    }
}
