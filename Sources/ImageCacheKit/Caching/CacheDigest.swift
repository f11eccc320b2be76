/// The SHA-256 of a cache key, held in four words so that the disk cache's in-memory index
/// can use it as a dictionary key without a heap allocation per entry (100 000 entries).
package struct CacheDigest: Hashable, Sendable, CustomStringConvertible {
    let w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    /// The digest of a key's text.
    init(of text: String) {
        var text = text
        let bytes = text.withUTF8 { SHA256Digest.digest(UnsafeRawBufferPointer($0)) }
        self.init(bytes: bytes)!
    }

    /// The digest from its 32 raw bytes; nil for any other length.
    init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        func word(_ i: Int) -> UInt64 {
            var value: UInt64 = 0
            for b in bytes[(i * 8)..<(i * 8 + 8)] { value = value << 8 | UInt64(b) }
            return value
        }
        w0 = word(0); w1 = word(1); w2 = word(2); w3 = word(3)
    }

    /// The digest from 32 raw bytes in memory (an index row); nil for any other length.
    init?(raw: UnsafeRawBufferPointer) {
        guard raw.count == 32 else { return nil }
        func word(_ i: Int) -> UInt64 {
            var value: UInt64 = 0
            for j in 0..<8 { value = value << 8 | UInt64(raw[i * 8 + j]) }
            return value
        }
        w0 = word(0); w1 = word(1); w2 = word(2); w3 = word(3)
    }

    /// The digest from 64 lowercase hex characters (a content file's name); nil otherwise.
    init?(hex: Substring) {
        guard hex.utf8.count == 64 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(32)
        var high: UInt8 = 0
        for (i, c) in hex.utf8.enumerated() {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            default: return nil
            }
            if i % 2 == 0 { high = v } else { bytes.append(high << 4 | v) }
        }
        self.init(bytes: bytes)
    }

    /// Hashes one word: a SHA-256's words are already uniformly spread, so the other three
    /// add nothing to a table's distribution but time to each of its probes (several per
    /// memory hit). Equality still compares all four; the hasher's per-process seed still
    /// keeps bucket positions unpredictable.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(w0)
    }

    /// The 32 raw bytes (as stored in the index).
    var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(32)
        for w in [w0, w1, w2, w3] {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: w >> UInt64(shift))) }
        }
        return out
    }

    /// 64 lowercase hex characters: the content file's name. Written straight into the
    /// string's storage: every path the cache builds goes through here.
    package var hex: String {
        String(unsafeUninitializedCapacity: 64) { buffer in
            let digits: StaticString = "0123456789abcdef"
            let table = digits.utf8Start
            var i = 0
            for word in [w0, w1, w2, w3] {
                var shift: UInt64 = 60
                while true {
                    buffer[i] = table[Int((word >> shift) & 0xf)]
                    i += 1
                    if shift == 0 { break }
                    shift -= 4
                }
            }
            return 64
        }
    }

    public var description: String { hex }
}
