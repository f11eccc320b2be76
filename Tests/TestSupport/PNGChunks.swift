/// A PNG as its chunk list, to build hostile and unusual PNGs in tests: insert a private or
/// text chunk, mangle a trailer, drop IEND, or write 16-bit images whose header libpng's own
/// writer would not produce (it always adds gAMA/sRGB).
public struct PNGChunks: Sendable {
    public struct Chunk: Sendable {
        public var type: String
        public var data: [UInt8]

        public init(_ type: String, _ data: [UInt8]) {
            self.type = type
            self.data = data
        }
    }

    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public var chunks: [Chunk]

    public init(_ chunks: [Chunk]) { self.chunks = chunks }

    /// Splits a well-formed PNG into its chunks (nil when it is not one).
    public init?(parsing bytes: [UInt8]) {
        guard bytes.count >= 8, Array(bytes.prefix(8)) == Self.signature else { return nil }
        var chunks: [Chunk] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard offset + 12 + length <= bytes.count else { return nil }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            chunks.append(Chunk(type, Array(bytes[offset + 8..<offset + 8 + length])))
            offset += 12 + length
        }
        self.chunks = chunks
    }

    /// The file: signature, then each chunk with its length and CRC.
    public var bytes: [UInt8] {
        var output = Self.signature
        for chunk in chunks { output += Self.encode(chunk) }
        return output
    }

    /// One chunk as it sits in a file (length, type, data, CRC).
    public static func encode(_ chunk: Chunk) -> [UInt8] {
        let body = Array(chunk.type.utf8) + chunk.data
        return bigEndian(UInt32(chunk.data.count)) + body + bigEndian(crc32(body))
    }

    /// Inserts `chunk` before the first chunk of type `before`.
    public mutating func insert(_ chunk: Chunk, before type: String) {
        let index = chunks.firstIndex { $0.type == type } ?? chunks.endIndex
        chunks.insert(chunk, at: index)
    }

    /// A 16-bit PNG (grey when `channels` is 1, RGB when 3) with no gAMA, sRGB or iCCP chunk,
    /// its rows stored uncompressed (zlib stored blocks): samples big-endian, row-major.
    public static func sixteenBit(width: Int, height: Int, channels: Int, samples: [UInt16]) -> [UInt8] {
        precondition(samples.count == width * height * channels)
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [16, channels == 1 ? 0 : 2, 0, 0, 0]
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (1 + width * channels * 2))
        for y in 0..<height {
            raw.append(0) // filter: none
            for sample in samples[(y * width * channels)..<((y + 1) * width * channels)] {
                raw += [UInt8(sample >> 8), UInt8(sample & 0xFF)]
            }
        }
        return PNGChunks([Chunk("IHDR", header), Chunk("IDAT", storedZlib(raw)), Chunk("IEND", [])]).bytes
    }

    /// A zlib stream holding `data` in stored (uncompressed) deflate blocks.
    public static func storedZlib(_ data: [UInt8]) -> [UInt8] {
        var output: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let final: UInt8 = offset + count == data.count ? 1 : 0
            output += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            output += data[offset..<offset + count]
            offset += count
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return output + bigEndian(b << 16 | a)
    }

    /// PNG's CRC-32 (ISO 3309) of `bytes`.
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        crcTable.withUnsafeBufferPointer { table in
            bytes.withUnsafeBufferPointer { bytes in
                for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    private static let crcTable: [UInt32] = (0..<256).map { index -> UInt32 in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    public static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
