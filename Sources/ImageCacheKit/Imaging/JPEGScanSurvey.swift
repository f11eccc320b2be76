/// What a complete JPEG body's markers say about the cost of decoding it, read before any
/// decode starts: the frame's components with their sampling factors, how many scans there
/// are, and how many 8×8 blocks the decoder will visit in all.
///
/// libjpeg-turbo 2.1.5 has no scan limit (`TJPARAM_SCANLIMIT` is 3.x; `TJFLAG_LIMITSCANS`
/// stops only past 500), and every progressive scan walks every block of its components, so a
/// small file with hundreds of scans costs seconds of CPU. The walk steps over entropy-coded
/// data by its markers (`JPEGMarkerWalker`), so it costs one pass over the bytes and no memory.
struct JPEGScanSurvey {
    /// One frame component: its id and sampling factors.
    struct Component {
        var id: UInt8
        var horizontal: Int
        var vertical: Int
    }

    /// The frame's components (empty when no frame header was found).
    var components: [Component] = []
    /// Frame size as declared by the SOF.
    var width = 0
    var height = 0
    /// Whether the frame is progressive (its decode holds every coefficient at once).
    var isProgressive = false
    /// SOS markers before EOI (or the end of the body).
    var scanCount = 0
    /// 8×8 blocks the entropy decoder visits: the blocks of each scan's components, summed
    /// over the scans (a progressive frame adds one output pass over all its blocks).
    var blockVisits = 0
    /// Bytes of APP2 segments (where an ICC profile lives), which a thumbnail may copy.
    var app2Bytes = 0

    /// Walks every marker of a complete body; stops at EOI.
    init(_ reader: ByteReader) {
        var walker = JPEGMarkerWalker(reader)
        walk: while case .segment(let segment) = walker.next() {
            let payload = segment.payload
            switch segment.marker {
            case let marker where JPEGMarkerWalker.isStartOfFrame(marker) && components.isEmpty:
                isProgressive = JPEGMarkerWalker.isProgressive(marker)
                readFrame(reader, payload)
            case JPEGMarkerWalker.sos:
                scanCount += 1
                blockVisits = blockVisits.addingClamped(scanBlocks(reader, payload))
            case JPEGMarkerWalker.eoi:
                break walk
            case 0xE2:
                app2Bytes = app2Bytes.addingClamped(payload.count)
            default:
                continue
            }
        }
        if isProgressive { blockVisits = blockVisits.addingClamped(totalBlocks) }
    }

    /// Every block of every component, as the coefficient buffer of a progressive decode
    /// holds them (each component's block grid rounded up to whole MCUs).
    var totalBlocks: Int {
        components.reduce(0) { $0.addingClamped(blocks(of: $1, roundedToMCU: true)) }
    }

    /// The component's block grid, at full scale.
    func blocks(of component: Component, roundedToMCU: Bool) -> Int {
        let maxV = components.map(\.vertical).max() ?? 1
        var down = Self.ceilDiv(height * component.vertical, 8 * maxV)
        if roundedToMCU { down = Self.ceilDiv(down, component.vertical) * component.vertical }
        return blocksAcross(of: component, roundedToMCU: roundedToMCU) * down
    }

    /// The component's blocks in one row of blocks, at full scale.
    func blocksAcross(of component: Component, roundedToMCU: Bool = true) -> Int {
        let maxH = components.map(\.horizontal).max() ?? 1
        let across = Self.ceilDiv(width * component.horizontal, 8 * maxH)
        return roundedToMCU ? Self.ceilDiv(across, component.horizontal) * component.horizontal : across
    }

    private mutating func readFrame(_ reader: ByteReader, _ payload: Range<Int>) {
        let base = payload.lowerBound
        guard let height = reader.u16be(base + 1), let width = reader.u16be(base + 3),
              let count = reader.u8(base + 5) else { return }
        var components: [Component] = []
        for index in 0..<Int(count) {
            let offset = base + 6 + index * 3
            guard offset + 3 <= payload.upperBound, let id = reader.u8(offset),
                  let sampling = reader.u8(offset + 1) else { return }
            // libjpeg refuses factors outside 1…4; clamp so a bad one cannot skew the estimate down.
            components.append(Component(id: id, horizontal: min(4, max(1, Int(sampling >> 4))),
                                        vertical: min(4, max(1, Int(sampling & 0x0F)))))
        }
        self.width = width
        self.height = height
        self.components = components
    }

    /// The blocks one scan visits: those of the frame components it names (a component named
    /// twice, or one the frame lacks, counts as the largest; libjpeg refuses such scans anyway).
    private func scanBlocks(_ reader: ByteReader, _ payload: Range<Int>) -> Int {
        guard let count = reader.u8(payload.lowerBound), !components.isEmpty else { return 0 }
        let largest = components.map { blocks(of: $0, roundedToMCU: true) }.max() ?? 0
        var total = 0
        for index in 0..<Int(count) {
            let id = reader.u8(payload.lowerBound + 1 + index * 2)
            let blocks = components.first { $0.id == id }.map { self.blocks(of: $0, roundedToMCU: true) } ?? largest
            total = total.addingClamped(blocks)
        }
        return total
    }

    private static func ceilDiv(_ value: Int, _ divisor: Int) -> Int {
        (value + divisor - 1) / divisor
    }
}

extension Int {
    /// `self + other`, or `Int.max` instead of trapping: estimates from outside numbers saturate.
    func addingClamped(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    /// `self × other`, or `Int.max` instead of trapping (for non-negative operands).
    func multipliedClamped(by other: Int) -> Int {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? .max : product
    }
}
