import ImageCacheProtocol

/// Bounds-checked big- and little-endian reads over a borrowed byte buffer.
///
/// Every header parser in Imaging reads untrusted bytes that may stop anywhere (a partial
/// download) or lie about offsets (fuzzed EXIF); each read returns nil instead of touching
/// memory past the buffer, so "never reads past the buffer" holds by construction.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var count: Int { bytes.count }

    /// Whether `length` bytes starting at `offset` lie inside the buffer (overflow-safe).
    func has(_ offset: Int, _ length: Int) -> Bool {
        offset >= 0 && length >= 0 && offset <= bytes.count && length <= bytes.count - offset
    }

    func u8(_ offset: Int) -> UInt8? {
        has(offset, 1) ? bytes[offset] : nil
    }

    func u16be(_ offset: Int) -> Int? {
        guard has(offset, 2) else { return nil }
        return Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
    }

    func u16le(_ offset: Int) -> Int? {
        guard has(offset, 2) else { return nil }
        return Int(bytes[offset + 1]) << 8 | Int(bytes[offset])
    }

    func u24le(_ offset: Int) -> Int? {
        guard has(offset, 3) else { return nil }
        return Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset])
    }

    func u32be(_ offset: Int) -> Int? {
        guard has(offset, 4) else { return nil }
        return Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16
            | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    func u32le(_ offset: Int) -> Int? {
        guard has(offset, 4) else { return nil }
        return Int(bytes[offset + 3]) << 24 | Int(bytes[offset + 2]) << 16
            | Int(bytes[offset + 1]) << 8 | Int(bytes[offset])
    }

    /// Whether the bytes at `offset` equal `literal` (false when the buffer is too short).
    func matches(_ offset: Int, _ literal: [UInt8]) -> Bool {
        guard has(offset, literal.count) else { return false }
        for index in 0..<literal.count where bytes[offset + index] != literal[index] { return false }
        return true
    }

    /// Whether the buffer is shorter than `literal` and is its beginning: more bytes may still
    /// complete the match (a magic number sniffed on a body's first chunk).
    func isIncompletePrefix(of literal: [UInt8]) -> Bool {
        guard count < literal.count else { return false }
        for index in 0..<count where bytes[index] != literal[index] { return false }
        return true
    }
}

/// Lends an array's bytes to a body that throws only `E`, keeping the error typed
/// (`Array.withUnsafeBytes` rethrows untyped).
func withRawBytes<T, E: Error>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
    var result: Result<T, E>?
    bytes.withUnsafeBytes { raw in result = Result { () throws(E) -> T in try body(raw) } }
    return try result!.get()
}
