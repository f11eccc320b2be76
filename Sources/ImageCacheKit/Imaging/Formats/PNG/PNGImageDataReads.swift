import CPNGReader
import ImageCacheProtocol

/// An IDAT chunk's bytes regrouped into the reads libpng's pull reader makes of it: its data
/// in pieces of `readSize` bytes from the start of the data (the last one
/// shorter), then the CRC as it comes.
///
/// Why: libpng inflates each read in calls that stop when the row is full or the input runs
/// out. Whether a damaged zlib stream right after the last row (a bad Adler-32 checksum, a bad
/// block header) is met in the call that completes that row, where it is an error, or in a
/// later one, where libpng only warns, depends on where the reads end. Giving the progressive
/// reader the pull reader's reads makes its verdict `validate`'s, however the body arrived.
struct PNGImageDataReads {
    /// Bytes of a full read: libpng's own, from the build it was compiled with.
    static let readSize = Int(ic_png_idat_read_size())
    /// Data bytes of the chunk not yet part of a read.
    private var dataLeft: Int
    /// Bytes the read being gathered still needs.
    private var readLeft = 0
    /// The read being gathered, when it spans pieces of the body.
    private var gathered: [UInt8] = []

    /// For a chunk declaring `length` data bytes.
    init(length: Int) {
        dataLeft = length
    }

    /// Takes the chunk's next bytes (after its header) and hands `give` every read they
    /// complete, then any CRC bytes. A read within one piece is handed without a copy.
    mutating func pass(_ bytes: UnsafeRawBufferPointer,
                       to give: (UnsafeRawBufferPointer) throws(ImagingError) -> Void) throws(ImagingError) {
        var offset = 0
        while offset < bytes.count {
            if readLeft == 0 {
                guard dataLeft > 0 else { // the CRC
                    try give(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                    return
                }
                readLeft = min(Self.readSize, dataLeft)
                dataLeft -= readLeft
            }
            let take = min(readLeft, bytes.count - offset)
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)])
            offset += take
            readLeft -= take
            if gathered.isEmpty && readLeft == 0 {
                try give(piece)
                continue
            }
            gathered.append(contentsOf: piece)
            guard readLeft == 0 else { continue }
            // `withUnsafeBytes` rethrows untyped: the read's error comes back as a `Result`.
            try gathered.withUnsafeBytes { read in Result { () throws(ImagingError) in try give(read) } }.get()
            gathered.removeAll(keepingCapacity: true)
        }
    }
}
