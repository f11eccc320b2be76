/// What a complete JPEG body's markers say, read in one walk before any pixel is decoded: the
/// frame and its components, every scan, the tables the stream defines and how much entropy-
/// coded data it carries. Two decisions are made from it, each in one place:
/// - **cost** (`DecodeCost`): how many scans there are and how many 8×8 blocks the decoder
///   will visit. libjpeg-turbo 2.1.5 has no scan limit (`TJPARAM_SCANLIMIT` is 3.x;
///   `TJFLAG_LIMITSCANS` stops only past 500), and every progressive scan walks every block of
///   its components, so a small file with hundreds of scans costs seconds of CPU;
/// - **completeness** (`problem(hasEndOfImage:)`): whether those scans can carry every pixel
///   the frame declares. libjpeg fills what its data does not reach with grey and only warns,
///   and some cases it does not even warn about: a progressive file cut between two scans
///   decodes silently to a blurred picture, and arithmetic-coded data runs out into zeros.
///
/// The walk steps over entropy-coded data by its markers (`JPEGMarkerWalker`, with `memchr`),
/// so it costs one pass over the bytes and no memory beyond the per-component table.
struct JPEGScanSurvey {
    /// One frame component: its id, sampling factors (clamped to the standard's 1…4, so a
    /// hostile 0 cannot divide by zero or skew an estimate down) and quantization table slot.
    struct Component {
        var id: UInt8
        var horizontal: Int
        var vertical: Int
        var table: Int
    }

    /// The first frame header's marker (SOF0…SOF15), nil when none was found.
    private(set) var frameMarker: UInt8?
    /// Frame size as declared by the SOF.
    private(set) var width = 0
    private(set) var height = 0
    /// The frame's components (empty when no readable frame header was found).
    private(set) var components: [Component] = []
    /// SOS markers before EOI (or the end of the body).
    private(set) var scanCount = 0
    /// 8×8 blocks the entropy decoder visits: the blocks of each scan's components, summed
    /// over the scans (a progressive frame adds one output pass over all its blocks).
    private(set) var blockVisits = 0
    /// Bytes of APP2 segments (where an ICC profile lives), which a thumbnail's decode converts through.
    private(set) var app2Bytes = 0
    /// Whether the stream defines Huffman tables (DHT) / arithmetic conditioning (DAC).
    private(set) var definesHuffmanTables = false
    private(set) var definesArithmeticConditioning = false
    /// Bytes of entropy-coded data across all scans (restart markers included).
    private(set) var entropyBytes = 0
    /// Per component (frame order), the finest precision (`Al`) each coefficient reaches;
    /// nil = never scanned.
    private var finestPrecision: [[Int?]] = []
    /// The quantization tables' steps (DQT), which bound what a coefficient's last bit carries.
    private(set) var quantization = JPEGQuantization()
    /// Whether a JFIF APP0 marker came before the first scan: libjpeg then reads a
    /// three-component frame as YCbCr.
    private var sawJFIF = false
    /// The transform byte of an Adobe APP14 marker before the first scan (0: RGB, else
    /// YCbCr), which decides a three-component frame's colour space when no JFIF marker does.
    private var adobeTransform: UInt8?

    /// The progressive scans after the last one that carries DC coefficients, in order: the
    /// ones a thumbnail's decode may leave out (`droppableTail`). At most `trailingLimit`.
    private var trailingACScans: [TrailingScan] = []
    /// Whether more AC scans followed the last DC scan than `trailingACScans` keeps.
    private var trailingOverflow = false
    private static let trailingLimit = 64

    /// Where one progressive AC scan starts (its SOS marker) and what it brings: the frame
    /// component it names (an AC scan names one; nil when it names several or one the frame
    /// lacks) and the successive-approximation bits (`high` 0 for a first scan, else a
    /// refinement down to bit `low`).
    private struct TrailingScan {
        var offset: Int
        var component: Int?
        var high: Int
        var low: Int
    }

    /// Offset of the first SOS marker whose segment is whole (where the first scan starts).
    private(set) var firstScanOffset: Int?
    /// Where the current scan's entropy-coded data started, while the walk is inside it.
    private var scanDataStart: Int?
    /// Whether the walk has ended (EOI, or a segment the body cut short).
    private(set) var walkEnded = false

    /// An empty survey, fed one segment at a time (`visit`) by a walk over a body that is
    /// still arriving (`StreamingVerifier`).
    init() {}

    /// Walks every marker of a complete body; stops at EOI.
    init(_ reader: ByteReader) {
        var walker = JPEGMarkerWalker(reader)
        while !walkEnded, case .segment(let segment) = walker.next() {
            let whole = reader.has(segment.payload.lowerBound, segment.payload.count)
            visit(segment, payload: whole ? ByteReader(UnsafeRawBufferPointer(rebasing: reader.bytes[segment.payload])) : nil)
        }
        end(bodyLength: reader.count)
    }

    /// Whether `visit` reads the payload of a segment with this marker (a streaming walk keeps
    /// only those bytes; the others count by their length alone).
    func readsPayload(of marker: UInt8) -> Bool {
        marker == JPEGMarkerWalker.sos || marker == Self.dqt || marker == Self.app0 || marker == Self.app14
            || (JPEGMarkerWalker.isStartOfFrame(marker) && frameMarker == nil)
    }

    /// Takes the walk's next segment. `payload` is its bytes (nil when the body ended inside
    /// it, which ends the walk; any reader of the right length when `readsPayload` is false).
    mutating func visit(_ segment: JPEGMarkerWalker.Segment, payload: ByteReader?) {
        guard !walkEnded else { return }
        let isRestart = segment.marker >= 0xD0 && segment.marker <= 0xD7
        if let start = scanDataStart, !isRestart {
            entropyBytes = entropyBytes.addingClamped(max(0, segment.offset - start))
            scanDataStart = nil
        }
        guard let payload else {
            walkEnded = true
            return
        }
        switch segment.marker {
        case let marker where JPEGMarkerWalker.isStartOfFrame(marker) && frameMarker == nil:
            readFrame(marker, payload)
        case 0xC4:
            definesHuffmanTables = true
        case Self.dqt:
            quantization.read(payload)
        // libjpeg takes the colour space from the markers before the first scan, and a JFIF
        // marker only when it is whole (14 bytes), an Adobe one from 12.
        case Self.app0 where firstScanOffset == nil && payload.count >= 14 && payload.matches(0, Self.jfifSignature):
            sawJFIF = true
        case Self.app14 where firstScanOffset == nil && payload.count >= 12 && payload.matches(0, JPEGMetadata.adobeSignature):
            adobeTransform = payload.u8(11)
        case 0xCC:
            definesArithmeticConditioning = true
        case JPEGMarkerWalker.sos:
            scanCount += 1
            if firstScanOffset == nil { firstScanOffset = segment.offset }
            track(readScan(payload), at: segment.offset)
            scanDataStart = segment.payload.upperBound
        case JPEGMarkerWalker.eoi:
            walkEnded = true
        case 0xE2:
            app2Bytes = app2Bytes.addingClamped(segment.payload.count)
        default:
            break
        }
    }

    /// Ends the walk of a body `bodyLength` long: the last scan's data runs to its end, and a
    /// progressive frame adds its output pass. Call once.
    mutating func end(bodyLength: Int) {
        if let start = scanDataStart { entropyBytes = entropyBytes.addingClamped(max(0, bodyLength - start)) }
        scanDataStart = nil
        walkEnded = true
        blockVisits = blockVisits.addingClamped(outputPassVisits)
    }

    /// The block visits of a progressive frame's output pass (0 for a sequential one).
    var outputPassVisits: Int { isProgressive ? totalBlocks : 0 }

    // MARK: Frame

    /// Whether the frame is progressive (its decode holds every coefficient at once).
    var isProgressive: Bool { frameMarker.map(JPEGMarkerWalker.isProgressive) ?? false }

    /// Whether the frame is arithmetic-coded (SOF9–11, 13–15): such data can run out silently.
    var isArithmetic: Bool { (frameMarker ?? 0) >= 0xC9 }

    /// Whether the frame's first component is luma, as libjpeg decides the colour space: a
    /// grey frame; a three-component one unless an Adobe marker says RGB (transform 0) with no
    /// JFIF marker, or, with neither marker, its component ids spell R, G, B. Four components
    /// (CMYK, YCCK) and the rest: no.
    var firstComponentIsLuma: Bool {
        switch components.count {
        case 1: return true
        case 3:
            if sawJFIF { return true }
            if let adobeTransform { return adobeTransform != 0 }
            return components.map(\.id) != Array("RGB".utf8)
        default: return false
        }
    }

    /// Whether the first component's quantization is no coarser than libjpeg's at quality 75
    /// (`JPEGQuantization.isNoCoarserThanQuality75`).
    var firstComponentIsFinelyQuantized: Bool {
        guard let first = components.first else { return false }
        return quantization.isNoCoarserThanQuality75(slot: first.table)
    }

    private static let dqt: UInt8 = 0xDB
    private static let app0: UInt8 = 0xE0
    private static let app14: UInt8 = 0xEE
    private static let jfifSignature: [UInt8] = Array("JFIF".utf8) + [0]

    /// Every block of every component, as the coefficient buffer of a progressive decode
    /// holds them (each component's block grid rounded up to whole MCUs).
    var totalBlocks: Int {
        components.reduce(0) { $0.addingClamped(blocks(of: $1, roundedToMCU: true)) }
    }

    /// 8×8 blocks the frame's pixels cover, over all components (without the MCU padding).
    var blockCount: Int {
        components.reduce(0) { $0.addingClamped(blocks(of: $1, roundedToMCU: false)) }
    }

    /// The component's block grid, at full scale.
    func blocks(of component: Component, roundedToMCU: Bool) -> Int {
        let maxV = components.map(\.vertical).max() ?? 1
        var down = Self.ceilDiv(height * component.vertical, 8 * maxV)
        if roundedToMCU { down = Self.ceilDiv(down, component.vertical) * component.vertical }
        return blocksAcross(of: component, roundedToMCU: roundedToMCU).multipliedClamped(by: down)
    }

    /// The component's blocks in one row of blocks, at full scale.
    func blocksAcross(of component: Component, roundedToMCU: Bool = true) -> Int {
        let maxH = components.map(\.horizontal).max() ?? 1
        let across = Self.ceilDiv(width * component.horizontal, 8 * maxH)
        return roundedToMCU ? Self.ceilDiv(across, component.horizontal) * component.horizontal : across
    }

    // MARK: Completeness

    /// Why these scans cannot carry every pixel of the frame, or nil when they can:
    /// - process mismatch: an arithmetic-coding frame whose stream defines Huffman tables and
    ///   no arithmetic conditioning, or the reverse: the frame header was patched over data
    ///   coded the other way;
    /// - completeness: every component is scanned (a progressive frame: its DC at least). A
    ///   body without EOI must also finish what its scans started: every coefficient a scan
    ///   began is refined to full precision (`Al = 0`), else it was cut between two scans. With
    ///   an EOI an unfinished refinement is accepted, as libjpeg and browsers accept it: it is
    ///   what an encoder that stops early writes (jpeg-decoder's `progressive-missing-ac.jpg`),
    ///   and the picture is coarser, not grey;
    /// - volume: a Huffman-coded block costs at least one bit (its DC code), so scan data
    ///   shorter than one bit per 8×8 block cannot fill the frame (a 631-byte file declaring
    ///   7000×7000).
    /// - Parameter hasEndOfImage: whether the body ends in EOI.
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
        for (index, precision) in finestPrecision.enumerated() {
            let finished = hasEndOfImage || precision.allSatisfy { $0 == nil || $0 == 0 }
            let complete = precision[0] != nil && (!isProgressive || finished)
            if !complete {
                return "incomplete: the scans do not cover every coefficient of component \(components[index].id)"
            }
        }
        if !isArithmetic && entropyBytes < (blockCount.addingClamped(7)) / 8 {
            return "the frame declares \(width)×\(height) but its \(entropyBytes) bytes of scan data cannot fill it"
        }
        return nil
    }

    // MARK: Reading

    private mutating func readFrame(_ marker: UInt8, _ payload: ByteReader) {
        guard payload.count >= 6, let height = payload.u16be(1), let width = payload.u16be(3),
              let count = payload.u8(5), payload.count >= 6 + 3 * Int(count) else { return }
        frameMarker = marker
        self.width = width
        self.height = height
        for index in 0..<Int(count) {
            let offset = 6 + 3 * index
            let sampling = Int(payload.u8(offset + 1) ?? 0x11)
            components.append(Component(id: payload.u8(offset) ?? 0,
                                        horizontal: min(4, max(1, sampling >> 4)), vertical: min(4, max(1, sampling & 15)),
                                        table: Int(payload.u8(offset + 2) ?? 0)))
        }
        finestPrecision = Array(repeating: Array(repeating: nil, count: 64), count: components.count)
    }

    /// Counts the blocks one scan visits (those of the frame components it names; a component
    /// named twice, or one the frame lacks, counts as the largest, since libjpeg refuses such
    /// scans anyway) and records the precision its coefficients reach. Returns the scan's band
    /// and approximation bits, and the one component it names, when it is a progressive scan
    /// whose header reads whole.
    private mutating func readScan(_ payload: ByteReader) -> ScanBand? {
        guard let count = payload.u8(0).map(Int.init), !components.isEmpty else { return nil }
        let largest = components.map { blocks(of: $0, roundedToMCU: true) }.max() ?? 0
        var named: [Int?] = []
        for index in 0..<count {
            let id = payload.u8(1 + 2 * index)
            let component = components.firstIndex { $0.id == id }
            named.append(component)
            blockVisits = blockVisits.addingClamped(component.map { blocks(of: components[$0], roundedToMCU: true) } ?? largest)
        }
        guard payload.count >= 1 + 2 * count + 3 else { return nil }
        let tail = 1 + 2 * count
        guard let start = payload.u8(tail).map(Int.init), let end = payload.u8(tail + 1).map(Int.init),
              let approximation = payload.u8(tail + 2) else { return nil }
        let low = Int(approximation & 15)
        // A sequential scan carries all of its components' coefficients whatever its Ss/Se say.
        guard !isProgressive || (start <= end && end <= 63) else { return nil }
        let range = isProgressive ? start...end : 0...0
        for component in named.compactMap({ $0 }) {
            for coefficient in range {
                finestPrecision[component][coefficient] = min(finestPrecision[component][coefficient] ?? low, low)
            }
        }
        return isProgressive ? (start, Int(approximation >> 4), low, named.count == 1 ? named[0] : nil) : nil
    }

    private typealias ScanBand = (start: Int, high: Int, low: Int, component: Int?)

    /// Keeps the run of AC scans since the last DC scan (a scan it cannot read ends the run,
    /// as a DC scan does: nothing before it may be left out).
    private mutating func track(_ scan: ScanBand?, at offset: Int) {
        guard let scan, scan.start > 0 else {
            trailingACScans.removeAll()
            trailingOverflow = false
            return
        }
        guard trailingACScans.count < Self.trailingLimit else {
            trailingOverflow = true
            return
        }
        trailingACScans.append(TrailingScan(offset: offset, component: scan.component, high: scan.high, low: scan.low))
    }

    // MARK: A thumbnail's scans

    /// Where a thumbnail's decode of this progressive Huffman-coded body may end it (its
    /// offset, before which an EOI is put), or nil when it must read every scan.
    ///
    /// Only the last scans go, and only those after the last DC scan that bring nothing the
    /// scaled IDCT uses (at 1/8, `dcOnly`: the AC scans of a component whose IDCT is 1×1,
    /// `readsAC(atOneEighth:)`) or only the final bit of the luma's AC coefficients (a
    /// refinement to `Al` = 0 of the first component, when it is luma): the
    /// picture then lacks at most the lowest bit of the luma coefficients it uses, and its
    /// colours are whole. That refinement is two fifths of a typical progressive file's bytes
    /// (libjpeg's default script ends with it), and its entropy decoding, the floor of any
    /// decode, over a quarter of the work; at a thumbnail's scale the lost bit costs at most a
    /// thousandth of SSIM at 1/4, and under 0.004 at 1/2 from a file quantized at libjpeg's
    /// quality 75 or finer, the only one the caller asks of at that scale
    /// (`JPEGDecoder.thumbnailEnd`; docs/benchmarks.md). The chroma's last
    /// bit stays: leaving it out too saves 6 % more of the bytes and costs the colour planes
    /// up to 0.02 SSIM.
    func droppableTail(dcOnly: Bool) -> Int? {
        guard isProgressive, !isArithmetic, !trailingOverflow else { return nil }
        let luma = firstComponentIsLuma
        var offset: Int?
        for scan in trailingACScans.reversed() {
            guard let component = scan.component else { break }
            let unused = dcOnly && !readsAC(atOneEighth: components[component])
            let lastBitOfLuma = luma && component == 0 && scan.high > 0 && scan.low == 0
            guard unused || lastBitOfLuma else { break }
            offset = scan.offset
        }
        return offset
    }

    /// Whether a decode at 1/8 reads this component's AC coefficients. Its luma and any
    /// component at the frame's full sampling get a 1×1 IDCT (the DC coefficient alone), but
    /// libjpeg-turbo scales a component subsampled both ways by a power of two up inside a
    /// larger IDCT instead of upsampling it (`jpeg_core_output_dimensions`: 4:2:0 chroma gets
    /// a 2×2 one), and that one reads AC coefficients.
    func readsAC(atOneEighth component: Component) -> Bool {
        let maxH = components.map(\.horizontal).max() ?? 1
        let maxV = components.map(\.vertical).max() ?? 1
        return maxH % (2 * component.horizontal) == 0 && maxV % (2 * component.vertical) == 0
    }

    private static func ceilDiv(_ value: Int, _ divisor: Int) -> Int {
        (value + divisor - 1) / divisor
    }
}
