/// What a JPEG's whole marker stream says about its scans, read without decoding a pixel:
/// whether those scans can possibly carry every pixel the frame header declares.
///
/// libjpeg fills whatever its data does not reach with grey and only warns, and some cases it
/// does not even warn about: a progressive file cut between two scans decodes silently to a
/// blurred picture, and arithmetic-coded data simply runs out into zeros. These checks refuse
/// such bodies before any decode is paid for (contract: validation means the pixels are right):
/// - process mismatch: an arithmetic-coding frame (SOF9–11) whose stream defines Huffman
///   tables and no arithmetic conditioning, or a Huffman frame defining conditioning and no
///   Huffman tables: the frame header was patched over data coded the other way;
/// - completeness: every component is scanned (a progressive frame: its DC at least). A body
///   without EOI must also finish what its scans started: every coefficient a scan began is
///   refined to full precision (successive approximation reaching `Al = 0`), else it was cut
///   between two scans. With an EOI present an unfinished refinement is accepted, as libjpeg
///   and browsers accept it: it is what an encoder that stops early writes (jpeg-decoder's
///   `progressive-missing-ac.jpg` never refines its DC), and the picture is coarser, not grey;
/// - volume: a Huffman-coded block costs at least one bit (its DC code), so scan data shorter
///   than one bit per 8×8 block cannot fill the frame (a 631-byte file declaring 7000×7000).
struct JPEGScanStructure {
    struct Component {
        var id: UInt8
        var horizontal: Int
        var vertical: Int
    }

    private(set) var frameMarker: UInt8?
    private(set) var width = 0
    private(set) var height = 0
    private(set) var components: [Component] = []
    private(set) var definesHuffmanTables = false
    private(set) var definesArithmeticConditioning = false
    /// Bytes of entropy-coded data across all scans (restart markers included).
    private(set) var entropyBytes = 0
    /// Per component (frame order), the finest precision (`Al`) each coefficient reaches; nil = never scanned.
    private var finestPrecision: [[Int?]] = []

    /// Walks every marker of a complete body (the walk steps over entropy-coded data).
    init(_ reader: ByteReader) {
        var walker = JPEGMarkerWalker(reader)
        var scanDataStart: Int?
        walk: while case .segment(let segment) = walker.next() {
            let isRestart = segment.marker >= 0xD0 && segment.marker <= 0xD7
            if let start = scanDataStart, !isRestart {
                entropyBytes += max(0, segment.offset - start)
                scanDataStart = nil
            }
            guard reader.has(segment.payload.lowerBound, segment.payload.count) else { break }
            switch segment.marker {
            case let marker where JPEGMarkerWalker.isStartOfFrame(marker) && frameMarker == nil:
                readFrame(marker, segment.payload, reader)
            case 0xC4:
                definesHuffmanTables = true
            case 0xCC:
                definesArithmeticConditioning = true
            case JPEGMarkerWalker.sos:
                readScan(segment.payload, reader)
                scanDataStart = segment.payload.upperBound
            case JPEGMarkerWalker.eoi:
                break walk
            default:
                continue
            }
        }
        if let start = scanDataStart { entropyBytes += max(0, reader.count - start) }
    }

    /// Whether the frame is arithmetic-coded (SOF9–11, 13–15): such data can run out silently.
    var isArithmetic: Bool { (frameMarker ?? 0) >= 0xC9 }

    /// Why these scans cannot carry every pixel of the frame, or nil when they can.
    /// - Parameter hasEndOfImage: whether the body ends in EOI (see the completeness rule).
    func problem(hasEndOfImage: Bool) -> String? {
        guard let frameMarker, !components.isEmpty else { return nil } // the decoder reports it
        // Lossless and hierarchical frames are refused by the decoder itself (libjpeg-turbo 2.1).
        guard [0xC0, 0xC1, 0xC2, 0xC9, 0xCA].contains(frameMarker) else { return nil }
        if isArithmetic && definesHuffmanTables && !definesArithmeticConditioning {
            return "process mismatch: the frame declares arithmetic coding but the stream carries Huffman tables"
        }
        if !isArithmetic && definesArithmeticConditioning && !definesHuffmanTables {
            return "process mismatch: the frame declares Huffman coding but the stream carries arithmetic conditioning"
        }
        let progressive = JPEGMarkerWalker.isProgressive(frameMarker)
        for (index, precision) in finestPrecision.enumerated() {
            let finished = hasEndOfImage || precision.allSatisfy { $0 == nil || $0 == 0 }
            let complete = precision[0] != nil && (!progressive || finished)
            if !complete {
                return "incomplete: the scans do not cover every coefficient of component \(components[index].id)"
            }
        }
        if !isArithmetic && entropyBytes < (blockCount + 7) / 8 {
            return "the frame declares \(width)×\(height) but its \(entropyBytes) bytes of scan data cannot fill it"
        }
        return nil
    }

    /// 8×8 blocks the frame holds, over all components (without the MCU padding).
    var blockCount: Int {
        let maxH = components.map(\.horizontal).max() ?? 1, maxV = components.map(\.vertical).max() ?? 1
        return components.reduce(0) { total, component in
            let columns = (width * component.horizontal + maxH - 1) / maxH
            let rows = (height * component.vertical + maxV - 1) / maxV
            return total + ((columns + 7) / 8) * ((rows + 7) / 8)
        }
    }

    private mutating func readFrame(_ marker: UInt8, _ payload: Range<Int>, _ reader: ByteReader) {
        let base = payload.lowerBound
        guard payload.count >= 6, let height = reader.u16be(base + 1), let width = reader.u16be(base + 3),
              let count = reader.u8(base + 5), payload.count >= 6 + 3 * Int(count) else { return }
        frameMarker = marker
        self.width = width
        self.height = height
        for index in 0..<Int(count) {
            let offset = base + 6 + 3 * index
            let sampling = Int(reader.u8(offset + 1) ?? 0x11)
            // Sampling factors are 1…4 by the standard; clamp so a hostile 0 cannot divide by zero.
            components.append(Component(id: reader.u8(offset) ?? 0,
                                        horizontal: min(4, max(1, sampling >> 4)), vertical: min(4, max(1, sampling & 15))))
        }
        finestPrecision = Array(repeating: Array(repeating: nil, count: 64), count: components.count)
    }

    private mutating func readScan(_ payload: Range<Int>, _ reader: ByteReader) {
        let base = payload.lowerBound
        guard let count = reader.u8(base).map(Int.init), payload.count >= 1 + 2 * count + 3 else { return }
        let tail = base + 1 + 2 * count
        guard let start = reader.u8(tail).map(Int.init), let end = reader.u8(tail + 1).map(Int.init),
              let approximation = reader.u8(tail + 2) else { return }
        let low = Int(approximation & 15)
        // A sequential scan carries all of its components' coefficients whatever its Ss/Se say.
        let progressive = frameMarker.map(JPEGMarkerWalker.isProgressive) ?? false
        guard !progressive || (start <= end && end <= 63) else { return }
        let range = progressive ? start...end : 0...0
        for index in 0..<count {
            guard let id = reader.u8(base + 1 + 2 * index),
                  let component = components.firstIndex(where: { $0.id == id }) else { continue }
            for coefficient in range {
                finestPrecision[component][coefficient] = min(finestPrecision[component][coefficient] ?? low, low)
            }
        }
    }
}
