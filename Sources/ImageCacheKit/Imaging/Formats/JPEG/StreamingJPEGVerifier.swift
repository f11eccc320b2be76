import CJPEGWarnings
import ImageCacheProtocol

/// The JPEG half of `StreamingVerifier`: libjpeg with a suspending source (`CJPEGStream`) at
/// 1/8 scale, and the marker walk whose survey `Thumbnailer.validate` judges by, both fed the
/// same chunks. Each check of a whole-file validation is made here too, as early as the bytes
/// allow: the scan and work limits as scans arrive, libjpeg's fatal errors and its warnings
/// of corrupt data (`TurboJPEGDiagnostics`) as the data decodes, and what needs the whole
/// body (the scans' completeness, EOI) at the end.
///
/// One exception: libjpeg's arithmetic decoder cannot suspend ("Suspension not allowed
/// here"), so an arithmetic-coded frame (SOF9–11, rare on the web) is held whole and
/// validated at the end as `Thumbnailer.validate` does; the marker walk still applies the
/// limits as it arrives.
final class StreamingJPEGVerifier: StreamingFormatVerifier {
    private let stream: OpaquePointer
    private var walker = JPEGStreamWalker()
    private let header: ImageHeader
    /// libjpeg's header was read and reported (`memoryCost`): the next feed starts the decode.
    private var headerReported = false
    private var decoded = false
    /// Decode memory, known once libjpeg has read up to the first scan.
    private(set) var memoryCost: Int?

    /// The body so far, kept only for an arithmetic-coded frame (nil otherwise).
    private var wholeBody: [UInt8]?

    /// - Parameter arithmetic: whether the frame header (SOF9–15) declares arithmetic coding.
    init(header: ImageHeader, arithmetic: Bool) throws(ImagingError) {
        guard let stream = ic_jpeg_stream_create() else {
            throw ImagingError.library("libjpeg could not allocate a decompressor")
        }
        self.stream = stream
        self.header = header
        if arithmetic {
            wholeBody = []
            // Every coefficient at 2 bytes (as if 4:4:4), the 1/8-scale output, the body on top.
            let samples = header.storedWidth.multipliedClamped(by: header.storedHeight).multipliedClamped(by: header.components)
            memoryCost = samples.multipliedClamped(by: 2).addingClamped(samples / 64).addingClamped(DecodeCost.fixedOverhead)
        }
    }

    deinit { ic_jpeg_stream_destroy(stream) }

    /// Verifies the next chunk as far as it goes. Returns without starting the decode in the
    /// call where `memoryCost` becomes known, so the caller can refuse it first.
    func feed(_ chunk: UnsafeRawBufferPointer) throws(ImagingError) {
        walker.consume(chunk)
        let survey = walker.survey
        try DecodeCost.checkLimits(scanCount: survey.scanCount,
                                   blockVisits: survey.blockVisits.addingClamped(survey.outputPassVisits))
        guard !decoded else { return } // after EOI: a trailer, read by no decoder
        if wholeBody != nil {
            wholeBody!.append(contentsOf: chunk)
            return
        }
        let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self)
        try advance(ic_jpeg_stream_feed(stream, base, chunk.count, 0), endOfInput: false)
        try refuseCorruption(hasEndOfImage: false)
    }

    /// The end of the body: the checks that need all of it, then libjpeg to its end (as
    /// TurboJPEG's memory source ends: "premature end of JPEG file" and an inserted EOI).
    func finish() throws(ImagingError) {
        walker.end()
        let survey = walker.survey
        try DecodeCost.checkLimits(scanCount: survey.scanCount, blockVisits: survey.blockVisits)
        guard survey.firstScanOffset != nil else {
            throw ImagingError.decodeFailed("JPEG: the body ends before the first scan", format: .jpeg)
        }
        if let wholeBody {
            _ = try Thumbnailer.validate(wholeBody, maxPixels: 0) // the limit was applied to the header
            return
        }
        let hasEndOfImage = walker.hasEndOfImage
        try JPEGDecoder.checkStructure(survey, hasEndOfImage: hasEndOfImage)
        if !decoded {
            try advance(ic_jpeg_stream_feed(stream, nil, 0, 1), endOfInput: true)
        }
        try refuseCorruption(hasEndOfImage: hasEndOfImage)
        guard decoded else {
            throw ImagingError.decodeFailed("JPEG: truncated (the decoder did not reach the end of the image)", format: .jpeg)
        }
    }

    /// Bytes libjpeg holds now: its unconsumed input and scanline buffer.
    var heldBytes: Int { Int(clamping: ic_jpeg_stream_held_bytes(stream)) }

    private func advance(_ status: Int32, endOfInput: Bool) throws(ImagingError) {
        var status = status
        if status == Int32(IC_JPEG_STREAM_HEADER) && !headerReported {
            try reportHeader()
            headerReported = true
            // Stop here: the coefficient buffer is allocated by the start, in a later call,
            // after the caller has seen the cost. At the end of the body there is no later call.
            guard endOfInput else { return }
        }
        if status == Int32(IC_JPEG_STREAM_HEADER) {
            status = ic_jpeg_stream_start(stream, try outputColorSpace(), endOfInput ? 1 : 0)
        }
        switch status {
        case Int32(IC_JPEG_STREAM_FAILED):
            let message = String(cString: ic_jpeg_stream_message(stream))
            throw ImagingError.decodeFailed("JPEG: \(message.isEmpty ? "not decodable" : message)", format: .jpeg)
        case Int32(IC_JPEG_STREAM_DONE):
            decoded = true
        default:
            break
        }
    }

    /// libjpeg's frame must be the one the probe read; the decode's memory is decided here.
    private func reportHeader() throws(ImagingError) {
        let info = ic_jpeg_stream_info_of(stream).pointee
        guard Int(info.width) == header.storedWidth, Int(info.height) == header.storedHeight else {
            throw ImagingError.decodeFailed("JPEG: the frame header disagrees with the first one", format: .jpeg)
        }
        let decode = DecodeCost.jpegDecode(walker.survey, scaledWidth: Int(info.scaledWidth),
                                           scaledHeight: Int(info.scaledHeight),
                                           allCoefficients: info.multipleScans != 0)
        memoryCost = decode.addingClamped(heldBytes).addingClamped(DecodeCost.fixedOverhead)
    }

    /// The output TurboJPEG would decode to for validation (`JPEGDecoder`): grey, RGB or CMYK
    /// by the number of components; libjpeg converts YCbCr and YCCK.
    private func outputColorSpace() throws(ImagingError) -> Int32 {
        switch header.components {
        case 1: return Int32(JCS_GRAYSCALE.rawValue)
        case 3: return Int32(JCS_EXT_RGB.rawValue)
        case 4: return Int32(JCS_CMYK.rawValue)
        default:
            throw ImagingError.decodeFailed("JPEG: \(header.components) colour components are not supported", format: .jpeg)
        }
    }

    /// A warning that data was missing or corrupt refuses the body at once; "premature end of
    /// JPEG file" only counts at the end, where EOI is known.
    private func refuseCorruption(hasEndOfImage: Bool) throws(ImagingError) {
        let warnings = ic_jpeg_stream_warnings(stream).pointee
        guard warnings.count > 0 else { return }
        if let refusal = TurboJPEGDiagnostics.refusal(warnings, firstMessage: "", hasEndOfImage: hasEndOfImage) {
            throw ImagingError.decodeFailed("JPEG: \(refusal)", format: .jpeg)
        }
    }
}
