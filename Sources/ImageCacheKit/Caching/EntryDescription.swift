import Foundation

/// What the index holds of one entry, kept with its content file so that a missing or
/// damaged index can be rebuilt from the files alone.
///
/// Content files must be exactly the image (clients open the path), so an entry's key and
/// metadata cannot live in a header inside it. Its description lives in the content file's
/// extended attribute `user.imagecached.entry` (`attributeName`), set on the temp file
/// before the rename, so a content file in place carries its description with it: one inode
/// per entry. Where the file system keeps no user attributes (tmpfs before Linux 6.6, some
/// FUSE and NFS mounts) or refuses one this big, it lives in a file beside the content file
/// instead (`<digest>.m`, `fileSuffix`), written in place before the entry's index row (it
/// is never served, so it needs no temp file and rename). A rebuild reads the attribute
/// first, then the file. Either way a description torn by a crash fails to decode (its
/// trailer is missing) and a rebuild drops that entry.
///
/// Layout (little-endian): `ICE1`, namespace u8, 3 reserved bytes, content size i64,
/// SHA-256 of the content (32 bytes), created f64, expires f64 (NaN: never), width i32 and
/// height i32 (-1: unknown), content type (u16 length + UTF-8), key (u32 length + UTF-8),
/// and `1ECI` last, so a truncated description is recognised.
struct EntryDescription: Equatable {
    var key: CacheKey
    var entry: StoredEntry

    /// The extended attribute of a content file holding its description.
    static let attributeName = "user.imagecached.entry"
    /// The suffix of the file beside a content file holding its description where the
    /// attribute cannot.
    static let fileSuffix = ".m"

    private static let head: [UInt8] = Array("ICE1".utf8)
    private static let tail: [UInt8] = Array("1ECI".utf8)

    func encoded() -> Data {
        var out = [UInt8]()
        out.reserveCapacity(96 + key.rawValue.utf8.count + entry.contentType.utf8.count)
        out += Self.head
        out += [key.namespace.rawValue, 0, 0, 0]
        Self.append(Int64(entry.size), to: &out)
        out += entry.checksum.bytes
        Self.append(entry.created.bitPattern, to: &out)
        Self.append((entry.expires ?? .nan).bitPattern, to: &out)
        Self.append(UInt32(bitPattern: Int32(entry.width ?? -1)), to: &out)
        Self.append(UInt32(bitPattern: Int32(entry.height ?? -1)), to: &out)
        let type = Array(entry.contentType.utf8.prefix(Int(UInt16.max)))
        Self.append(UInt16(type.count), to: &out)
        out += type
        let keyBytes = Array(key.rawValue.utf8)
        Self.append(UInt32(keyBytes.count), to: &out)
        out += keyBytes
        out += Self.tail
        return Data(out)
    }

    init(key: CacheKey, entry: StoredEntry) {
        self.key = key
        self.entry = entry
    }

    /// Parses a description; nil when it is truncated, of another format, or inconsistent.
    init?(decoding data: Data) {
        let bytes = [UInt8](data)
        var reader = Reader(bytes: bytes)
        guard reader.take(4) == Self.head,
              let ns = reader.take(4), let namespace = CacheNamespace(rawValue: ns[0]),
              let size = reader.int64(), size >= 0,
              let sum = reader.take(32), let checksum = CacheDigest(bytes: sum),
              let created = reader.uint64().map(Double.init(bitPattern:)),
              let expires = reader.uint64().map(Double.init(bitPattern:)),
              let width = reader.uint32().map({ Int32(bitPattern: $0) }),
              let height = reader.uint32().map({ Int32(bitPattern: $0) }),
              let typeLength = reader.uint16(), let type = reader.take(Int(typeLength)),
              let keyLength = reader.uint32(), let keyBytes = reader.take(Int(keyLength)),
              reader.take(4) == Self.tail, reader.atEnd,
              let key = CacheKey(storedText: String(decoding: keyBytes, as: UTF8.self)),
              key.namespace == namespace
        else { return nil }
        self.init(key: key, entry: StoredEntry(size: Int(size), checksum: checksum,
                                               contentType: String(decoding: type, as: UTF8.self),
                                               width: width < 0 ? nil : Int(width), height: height < 0 ? nil : Int(height),
                                               created: created, expires: expires.isNaN ? nil : expires))
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out += $0 }
    }

    private static func append(_ value: Int64, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out += $0 }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0
        var atEnd: Bool { offset == bytes.count }

        mutating func take(_ n: Int) -> [UInt8]? {
            guard n >= 0, offset + n <= bytes.count else { return nil }
            defer { offset += n }
            return Array(bytes[offset..<(offset + n)])
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard let raw = take(MemoryLayout<T>.size) else { return nil }
            var value: T = 0
            for (i, b) in raw.enumerated() { value |= T(truncatingIfNeeded: b) << (8 * i) }
            return value
        }

        mutating func int64() -> Int64? { integer(Int64.self) }
        mutating func uint64() -> UInt64? { integer(UInt64.self) }
        mutating func uint32() -> UInt32? { integer(UInt32.self) }
        mutating func uint16() -> UInt16? { integer(UInt16.self) }
    }
}
