/// Recognises AVIF by its `ftyp` box and reads the primary image's size from the `meta` box
/// (ISO/IEC 23008-12, HEIF): `pitm` names the primary item, `ipma` lists its properties,
/// `ipco` holds them; `ispe` is the stored size, `irot`/`imir` how to show it (mapped to an
/// `ExifOrientation`, so the layout gets upright dimensions and the thumbnail is turned like
/// a JPEG's), an `auxC` alpha property means an alpha plane.
///
/// Every read is bounds-checked and every walk advances by at least a box header, so the
/// cost is linear in the bytes given; a box that claims to run past the buffer means "need
/// more" (the body is still arriving) and, on a complete body, a truncated header.
enum AVIFHeaderParser {
    static let ftyp: [UInt8] = Array("ftyp".utf8)
    /// Brands of AVIF still images and image sequences (the latter are read for their still
    /// primary image, when they have one).
    static let brands: Set<String> = ["avif", "avis"]
    /// The largest `ftyp` box read through for a compatible brand: real ones hold a few
    /// brands (tens of bytes).
    static let largestBrandBox = 4096
    /// Most boxes walked at one level: real files have a handful; more is hostile.
    static let boxLimit = 4096
    static let alphaURNs: Set<String> = ["urn:mpeg:mpegB:cicp:systems:auxiliary:alpha", "urn:mpeg:hevc:2015:auxid:1"]

    /// `ftyp` at offset 4 with an AVIF brand; `.needMore` while the box is incomplete. The
    /// first two bytes of a real `ftyp` size are zero (the box is small), which keeps short
    /// bodies of other bytes "unknown" instead of "need more".
    static func sniff(_ reader: ByteReader) -> ImageFormat.SniffResult {
        for index in 0..<min(reader.count, 2) where reader.bytes[index] != 0 { return .unknown }
        if reader.count < 8 {
            for index in 4..<max(4, reader.count) where reader.bytes[index] != ftyp[index - 4] { return .unknown }
            return .needMore
        }
        guard reader.matches(4, ftyp), let size = reader.u32be(0), size >= 16 else { return .unknown }
        // The major brand alone is enough when it says AVIF.
        guard let major = fourCC(reader, 8) else { return .needMore }
        if brands.contains(major) { return .format(.avif) }
        // Compatible brands are looked for only in a box of real size, decided from its
        // declared size before any of it is read: so a prefix refuses exactly what the whole
        // body would, and no body is held waiting for a huge box's brands.
        guard size <= largestBrandBox else { return .unknown }
        guard reader.has(0, size) else { return .needMore }
        var offset = 8
        while offset + 4 <= size {
            if offset != 12, let brand = fourCC(reader, offset), brands.contains(brand) { return .format(.avif) }
            offset += 4
        }
        return .unknown
    }

    static func parse(_ reader: ByteReader) -> HeaderParseOutcome {
        var offset = 0
        var walked = 0
        while true {
            walked += 1
            guard walked <= boxLimit else { return .failed("more than \(boxLimit) top-level boxes before the meta box") }
            switch box(reader, at: offset, end: reader.count, topLevel: true) {
            case .needMore: return .needMore
            case .failed(let why): return .failed(why)
            case .box(let type, let content, let end):
                if type == "meta" {
                    // A FullBox: version and flags before its children.
                    return primaryImage(reader, from: content + 4, end: end)
                }
                offset = end
            }
        }
    }

    // MARK: Boxes

    enum Box {
        case box(type: String, content: Int, end: Int)
        case needMore
        case failed(String)
    }

    /// The box at `offset`, which must end by `end` (the parent's end). At the top level a
    /// box past the buffer is "need more"; inside `meta`, whose bytes have all arrived, it
    /// is a damaged file.
    static func box(_ reader: ByteReader, at offset: Int, end: Int, topLevel: Bool) -> Box {
        guard let size32 = reader.u32be(offset), let type = fourCC(reader, offset + 4) else {
            return topLevel ? .needMore : .failed("box header cut at \(offset)")
        }
        var size = size32, header = 8
        if size32 == 1 {
            guard let high = reader.u32be(offset + 8), let low = reader.u32be(offset + 12) else {
                return topLevel ? .needMore : .failed("box header cut at \(offset)")
            }
            guard high < 1 << 30 else { return .failed("box '\(type)' claims \(high) × 4 GiB") }
            size = high << 32 | low
            header = 16
        } else if size32 == 0 {
            // "To the end of the file": only a top-level box (mdat) may, and nothing follows it.
            guard topLevel else { return .failed("box '\(type)' of size 0 inside another box") }
            return type == "meta" ? .needMore : .failed("no meta box before the box '\(type)' that runs to the end")
        }
        guard size >= header else { return .failed("box '\(type)' has size \(size)") }
        let (boxEnd, overflow) = offset.addingReportingOverflow(size)
        guard !overflow else { return .failed("box '\(type)' has size \(size)") }
        if boxEnd > end {
            // A top-level box other than meta is skipped by its size: the next box's header
            // is then what is missing.
            guard topLevel else { return .failed("box '\(type)' runs past its parent") }
            if type == "meta" { return .needMore }
        }
        return .box(type: type, content: offset + header, end: boxEnd)
    }

    /// The children of a box's content, in order (each must lie within it).
    static func children(_ reader: ByteReader, from start: Int, end: Int) -> Result<[(type: String, content: Int, end: Int)], Failure> {
        var list: [(type: String, content: Int, end: Int)] = []
        var offset = start
        while offset < end {
            guard list.count < boxLimit else { return .failure(Failure("more than \(boxLimit) boxes in one box")) }
            switch box(reader, at: offset, end: end, topLevel: false) {
            case .box(let type, let content, let boxEnd):
                list.append((type, content, boxEnd))
                offset = boxEnd
            case .failed(let why): return .failure(Failure(why))
            case .needMore: return .failure(Failure("box cut at \(offset)"))
            }
        }
        return .success(list)
    }

    struct Failure: Error { let why: String; init(_ why: String) { self.why = why } }

    /// The primary item's size, orientation and alpha, from a `meta` box whose bytes have
    /// all arrived.
    static func primaryImage(_ reader: ByteReader, from start: Int, end: Int) -> HeaderParseOutcome {
        let boxes: [(type: String, content: Int, end: Int)]
        switch children(reader, from: start, end: end) {
        case .success(let list): boxes = list
        case .failure(let failure): return .failed("meta: \(failure.why)")
        }
        guard let pitm = boxes.first(where: { $0.type == "pitm" }),
              let version = reader.u8(pitm.content),
              let primary = version == 0 ? reader.u16be(pitm.content + 4) : reader.u32be(pitm.content + 4) else {
            return .failed("no primary item (pitm): AVIF image sequences without a still image are not decoded")
        }
        guard let iprp = boxes.first(where: { $0.type == "iprp" }),
              case .success(let iprpChildren) = children(reader, from: iprp.content, end: iprp.end),
              let ipco = iprpChildren.first(where: { $0.type == "ipco" }),
              case .success(let properties) = children(reader, from: ipco.content, end: ipco.end) else {
            return .failed("no readable item properties (iprp/ipco)")
        }
        var associated: [Int] = []
        for ipma in iprpChildren where ipma.type == "ipma" {
            associated += associations(reader, ipma: ipma, item: primary)
        }
        var width = 0, height = 0, rotation = 0
        var mirror: Int?
        for index in associated where index >= 1 && index <= properties.count {
            let property = properties[index - 1]
            switch property.type {
            case "ispe":
                guard let w = reader.u32be(property.content + 4), let h = reader.u32be(property.content + 8) else {
                    return .failed("ispe cut short")
                }
                (width, height) = (w, h)
            case "irot": rotation = Int(reader.u8(property.content) ?? 0) & 3
            case "imir": mirror = Int(reader.u8(property.content) ?? 0) & 1
            default: break
            }
        }
        guard width > 0, height > 0 else { return .failed("the primary item declares no size (ispe) or an empty one") }
        let alpha = properties.contains { property in
            property.type == "auxC" && alphaURNs.contains(cString(reader, from: property.content + 4, end: property.end))
        }
        return .header(ImageHeader(format: .avif, storedWidth: width, storedHeight: height,
                                   orientation: orientation(rotation: rotation, mirror: mirror),
                                   hasAlpha: alpha, components: alpha ? 4 : 3))
    }

    /// The 1-based property indices `ipma` associates with `item`.
    static func associations(_ reader: ByteReader, ipma: (type: String, content: Int, end: Int), item: Int) -> [Int] {
        guard let version = reader.u8(ipma.content), let flags = reader.u8(ipma.content + 3),
              let count = reader.u32be(ipma.content + 4) else { return [] }
        let wide = flags & 1 == 1
        var offset = ipma.content + 8
        for _ in 0..<max(0, min(count, (ipma.end - offset) / 3 + 1)) {
            guard let id = version < 1 ? reader.u16be(offset) : reader.u32be(offset) else { return [] }
            offset += version < 1 ? 2 : 4
            guard let n = reader.u8(offset), offset < ipma.end else { return [] }
            offset += 1
            var indices: [Int] = []
            for _ in 0..<Int(n) {
                guard offset < ipma.end, let value = wide ? reader.u16be(offset) : reader.u8(offset).map(Int.init) else { return [] }
                indices.append(wide ? value & 0x7FFF : value & 0x7F)
                offset += wide ? 2 : 1
            }
            if id == item { return indices }
        }
        return []
    }

    /// HEIF applies `irot` (counter-clockwise quarter turns) and then `imir` (axis 0: about a
    /// vertical axis, left and right exchanged; 1: top and bottom), as MIAF orders them.
    static func orientation(rotation: Int, mirror: Int?) -> ExifOrientation {
        switch (mirror, rotation) {
        case (nil, 1): return .left
        case (nil, 2): return .down
        case (nil, 3): return .right
        case (0, 0): return .upMirrored
        case (0, 1): return .rightMirrored
        case (0, 2): return .downMirrored
        case (0, 3): return .leftMirrored
        case (1, 0): return .downMirrored
        case (1, 1): return .leftMirrored
        case (1, 2): return .upMirrored
        case (1, 3): return .rightMirrored
        default: return .up
        }
    }

    static func fourCC(_ reader: ByteReader, _ offset: Int) -> String? {
        guard reader.has(offset, 4) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: reader.bytes[offset..<offset + 4]), as: UTF8.self)
    }

    static func cString(_ reader: ByteReader, from start: Int, end: Int) -> String {
        guard start >= 0, start < end, end <= reader.count else { return "" }
        var stop = start
        while stop < end && reader.bytes[stop] != 0 { stop += 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: reader.bytes[start..<stop]), as: UTF8.self)
    }
}
