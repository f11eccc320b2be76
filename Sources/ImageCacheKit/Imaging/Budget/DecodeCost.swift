import ImageCacheProtocol

/// What one decode will cost, computed from the body's header and markers before any pixel
/// is decoded: the peak bytes the decoder, converter, resampler and encoder allocate, and the
/// CPU work in 8×8-block visits. `DecodeBudget` admits decodes by these numbers.
///
/// The model, one function per stage, follows what the code really allocates (checked against
/// peak RSS in docs/benchmarks.md, "Hostile decodes"): stages run one after another, so the
/// peak is the body plus the largest stage, not the sum of them all. The decode itself is
/// priced by its format's codec (`ImageCodec.decodeCost`, in the format's folder under
/// `Formats/`); `of` adds the stages after it.
/// - JPEG (`jpegDecode`): the scaled output (4 channels for CMYK/YCCK, plus the RGB it is
///   converted to), and the coefficient buffer of every component at full size whenever the
///   frame has more than one scan (progressive or multi-scan: 2 bytes × 64 per block, at any
///   DCT scale); one MCU row of it otherwise.
/// - PNG (`pngDecode`): libpng's classic reader, row by row (`PNGDecoder`): a non-interlaced
///   image needs a band of 16 rows at 8 bits per sample and libpng's two rows of the source
///   (16-bit samples count twice); the resampler then holds the horizontally narrowed rows
///   (`streamedResampling`). An Adam7 image exists only after its last pass: it is read whole.
/// - GIF, WebP, AVIF (`firstFrameDecode`): the first frame at full size, by per-format figures.
/// - Resampling (`resampling`): the decoded picture, its premultiplied copy (RGBA), and the
///   two passes' outputs.
/// - Colour (`ColourTransform.memoryBytes`): a thumbnail of an image that declares its colours
///   holds a LittleCMS transform beside its decode: the profile twice and LittleCMS' tables
///   (a JPEG's profile is as large as its APP2 segments; a PNG's iCCP inflates to an unknown
///   size, so the largest profile converted is counted). The pixels are converted in place
///   (CMYK into the RGB copy already counted).
/// - Encoding (`encoding`): the upright thumbnail, its oriented copy, TurboJPEG's or libpng's
///   output.
public struct DecodeCost: Sendable, Hashable, CustomStringConvertible {
    /// Peak bytes the decode allocates, including the body it reads.
    public var bytes: Int
    /// Entropy-decoding work, in 8×8-block visits (a PNG's samples count 64 to a block).
    public var work: Int

    /// Creates a cost; `Thumbnailer.thumbnailCost`/`validationCost` compute real ones.
    public init(bytes: Int, work: Int) {
        self.bytes = max(0, bytes)
        self.work = max(0, work)
    }

    public var description: String { "\(Self.mebibytes(bytes)) MiB, \(work) block visits" }

    /// Most scans a JPEG may have. Ordinary progressive JPEGs have 10 (libjpeg's and
    /// mozjpeg's default scripts) and at most about 12; none of the corpus's ≈ 1 000 real or
    /// fuzzed JPEGs has more than 25. 64 leaves room for custom successive-approximation
    /// scripts and refuses the hundreds of scans that only exist to burn CPU.
    package static let scanLimit = 64

    /// Most entropy-decoding work one decode may take: 48 M block visits, ≈ 5× an ordinary
    /// 10-scan progressive 50 MP photo (≈ 9 M) and, measured on this project's machines,
    /// about 1.5 s of CPU (docs/benchmarks.md, "Hostile decodes"). More is refused as
    /// `decode_failed` before the decode starts.
    package static let workLimit = 48_000_000

    /// Work up to which a decode is "ordinary" for `DecodeBudget`'s lanes: 2 M block visits,
    /// a 12 MP progressive photo's decode (≈ 0.1 s); heavier ones share the heavy lane.
    package static let ordinaryWork = 2_000_000

    /// Bytes every decode allocates whatever its size: TurboJPEG's and libpng's contexts,
    /// Huffman tables, zlib's window, the resampler's weight tables.
    static let fixedOverhead = 1 << 20

    // MARK: The model, per stage

    /// Resizing a non-interlaced PNG as its bands arrive (`Resampler.resize(streaming:…)`):
    /// what the filter holds (`SeparableFilter.memory`) and the copy that undoes premultiplied
    /// alpha (RGBA).
    static func streamedResampling(width: Int, height: Int, channels: Int, targetWidth: Int, targetHeight: Int) -> Int {
        let filter = SeparableFilter.memory(sourceWidth: width, sourceHeight: height, channels: channels,
                                            width: targetWidth, height: targetHeight)
        let output = targetWidth.multipliedClamped(by: targetHeight).multipliedClamped(by: channels)
        return filter.addingClamped(channels == 4 ? output : 0)
    }

    /// Resizing a `width`×`height` picture to `target`: the picture, its premultiplied copy
    /// and the copy that undoes it (RGBA), and what the filter holds (`SeparableFilter.memory`).
    static func resampling(width: Int, height: Int, channels: Int, targetWidth: Int, targetHeight: Int) -> Int {
        let source = width.multipliedClamped(by: height).multipliedClamped(by: channels)
        if width == targetWidth && height == targetHeight { return source }
        let filter = SeparableFilter.memory(sourceWidth: width, sourceHeight: height, channels: channels,
                                            width: targetWidth, height: targetHeight)
        let output = targetWidth.multipliedClamped(by: targetHeight).multipliedClamped(by: channels)
        return source.addingClamped(channels == 4 ? source.addingClamped(output) : 0).addingClamped(filter)
    }

    /// Encoding the thumbnail: the upright picture, its oriented copy, the encoder's output
    /// and its copy (thumbnails carry no profile: they are sRGB).
    static func encoding(width: Int, height: Int, channels: Int) -> Int {
        let picture = width.multipliedClamped(by: height).multipliedClamped(by: channels)
        return picture.multipliedClamped(by: 4).addingClamped(2048)
    }

    // MARK: Whole decodes

    /// What a format's decode holds before resampling and encoding: its codec's part of the
    /// cost (`ImageCodec.decodeCost`), which `of` completes.
    struct Decode {
        /// Width of the decoded picture (stored orientation), what the resampler starts from.
        var width: Int
        /// Height of the decoded picture (stored orientation).
        var height: Int
        /// Channels of the decoded picture (1, 3 or 4), which every later stage holds.
        var channels: Int
        /// Peak bytes of the decode itself.
        var bytes: Int
        /// Entropy-decoding work, in 8×8-block visits.
        var work: Int
        /// The colour transform a thumbnail's decode holds beside it (`ColourTransform.memoryBytes`).
        var colourBytes = 0
        /// Whether the picture is resized while it decodes (a non-interlaced PNG's bands), so
        /// that the decode and the resampler's buffers are held at once.
        var resizedWhileDecoding = false
    }

    /// The cost of decoding `raw` (whose header is `header`) to a thumbnail of upright
    /// `width` (nil: a validation decode, as `Thumbnailer.validate` does it), through
    /// `codec`, with the body's survey, which the decode then uses too (`Thumbnailer.Surveyed`).
    ///
    /// - Throws: `decode_failed` for a JPEG over `scanLimit` scans or `workLimit` work, with
    ///   a message that says which and by how much.
    static func of<Codec: ImageCodec>(_ raw: UnsafeRawBufferPointer, header: ImageHeader, width: Int?, codec: Codec.Type,
                                      survey: Codec.Survey) throws(ImagingError) -> DecodeCost {
        let target = width.map { Thumbnailer.targetSize(of: header, width: $0) }
        let decode = try codec.decodeCost(raw, header: header, survey: survey, thumbnailWidth: target?.storedWidth)
        var peak = decode.bytes
        if let target {
            // Only pixels for a thumbnail are converted; the transform lives through the decode.
            peak = peak.addingClamped(decode.colourBytes)
            let resize = decode.resizedWhileDecoding
                ? peak.addingClamped(streamedResampling(width: decode.width, height: decode.height, channels: decode.channels,
                                                        targetWidth: target.storedWidth, targetHeight: target.storedHeight))
                : resampling(width: decode.width, height: decode.height, channels: decode.channels,
                             targetWidth: target.storedWidth, targetHeight: target.storedHeight)
            let encode = encoding(width: target.storedWidth, height: target.storedHeight, channels: decode.channels)
            peak = max(peak, resize, encode)
        }
        return DecodeCost(bytes: peak.addingClamped(raw.count).addingClamped(fixedOverhead), work: decode.work)
    }

    /// Refuses a JPEG over `scanLimit` scans or `workLimit` block visits, saying which and by
    /// how much. A streaming verification calls it as the scans arrive (the counts only grow).
    static func checkLimits(scanCount: Int, blockVisits: Int) throws(ImagingError) {
        guard scanCount <= scanLimit else {
            throw ImagingError.decodeFailed(
                "JPEG: \(scanCount) scans, over the limit of \(scanLimit) (ordinary progressive JPEGs have about 10)",
                format: .jpeg)
        }
        guard blockVisits <= workLimit else {
            throw ImagingError.decodeFailed(
                "JPEG: decoding would take \(blockVisits) block visits (\(scanCount) scans), over the limit of \(workLimit)",
                format: .jpeg)
        }
    }

    static func mebibytes(_ bytes: Int) -> String {
        let value = Double(bytes) / Double(1 << 20)
        return value < 10 ? String(Double(Int(value * 10)) / 10) : String(Int(value.rounded()))
    }
}
