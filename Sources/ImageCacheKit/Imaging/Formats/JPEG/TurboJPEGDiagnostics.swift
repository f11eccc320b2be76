import CJPEGWarnings

/// Tells TurboJPEG 2.1's warnings from its fatal errors, and harmless warnings from missing
/// pixels.
///
/// In 2.1.5, `tjDecompress2` returns -1 both when decoding failed and when it succeeded with
/// a warning, and `tjGetErrorCode` cannot tell them apart: its warning flag is sticky, so a
/// file that warned ("extraneous bytes") and then failed ("Bogus Huffman table definition")
/// still reports `TJERR_WARNING`. The message is reliable, though: a fatal error always
/// writes its message last and stops, so when the last message is one of libjpeg's warnings
/// (the `JWRN_*` texts of jerror.h, unchanged for decades) no fatal error happened.
///
/// Which warnings refuse a body (a body whose pixels are incomplete or corrupt is `decode_failed`,
/// docs/protocol.md, "Errors"): every one
/// that means data the picture needed was missing or corrupt (libjpeg then paints grey), so
/// all but the harmless few below. TurboJPEG keeps only the first warning's text, so the codes
/// of all of them come from `ic_tj_decompress` (CJPEGWarnings).
enum TurboJPEGDiagnostics {
    /// Starts of every libjpeg-turbo 2.1 warning message (`JWRN_*`).
    static let warningPrefixes = [
        "Corrupt JPEG data",                          // extraneous bytes, premature end of segment, bad codes, RST resync, bad ICC
        "Premature end of JPEG file",                 // JWRN_JPEG_EOF
        "Warning: unknown JFIF revision number",      // JWRN_JFIF_MAJOR
        "Inconsistent progression sequence",          // JWRN_BOGUS_PROGRESSION
        "Invalid SOS parameters for sequential JPEG", // JWRN_NOT_SEQUENTIAL
        "Application transferred too many scanlines", // JWRN_TOO_MUCH_DATA
        "Unknown Adobe color transform code",         // JWRN_ADOBE_XFORM
    ]

    /// Whether TurboJPEG's last message is a warning (the picture was produced) rather than an error.
    static func isWarning(_ message: String) -> Bool {
        warningPrefixes.contains { message.hasPrefix($0) }
    }

    /// Warnings that leave every pixel right: junk between segments (cameras pad before EOI),
    /// an unknown JFIF version or Adobe transform code, odd SOS fields of a sequential scan,
    /// a bad ICC chunk (the profile is dropped, the pixels are not touched).
    static let harmlessCodes: Set<UInt32> = [
        JWRN_EXTRANEOUS_DATA.rawValue, JWRN_JFIF_MAJOR.rawValue, JWRN_ADOBE_XFORM.rawValue,
        JWRN_NOT_SEQUENTIAL.rawValue, JWRN_TOO_MUCH_DATA.rawValue, JWRN_BOGUS_ICC.rawValue,
    ]

    /// Why the warnings of one decode mean wrong pixels, or nil when the picture is whole.
    ///
    /// "Premature end of JPEG file" alone, on a body without EOI, is a damaged trailer after
    /// complete scans (a cut inside a scan also raises "premature end of data segment"), and
    /// is accepted as browsers do; with an EOI present it cannot be harmless.
    /// - Parameter firstMessage: TurboJPEG's message, consulted only when the codes were not
    ///   recorded (a TurboJPEG whose handle layout is not 2.1's).
    static func refusal(_ warnings: ic_jpeg_warnings, firstMessage: String, hasEndOfImage: Bool) -> String? {
        guard warnings.recorded != 0 else {
            if firstMessage.isEmpty { return nil }
            let harmless = ["Corrupt JPEG data: bad ICC marker", "Warning: unknown JFIF revision number",
                            "Unknown Adobe color transform code", "Invalid SOS parameters for sequential JPEG"]
            if firstMessage.contains("extraneous bytes before marker") || harmless.contains(where: firstMessage.hasPrefix) {
                return nil
            }
            return firstMessage
        }
        let codes = withUnsafeBytes(of: warnings.codes) { raw in
            Array(raw.bindMemory(to: Int32.self).prefix(Int(max(0, min(warnings.codeCount, IC_JPEG_WARNING_CODES)))))
        }
        for code in codes.map({ UInt32(bitPattern: $0) }) where !harmlessCodes.contains(code) {
            if code == JWRN_JPEG_EOF.rawValue && !hasEndOfImage { continue }
            return describe(code)
        }
        return nil
    }

    private static func describe(_ code: UInt32) -> String {
        switch code {
        case JWRN_HIT_MARKER.rawValue: return "truncated or corrupt (premature end of data segment)"
        case JWRN_JPEG_EOF.rawValue: return "truncated (premature end of JPEG file)"
        case JWRN_HUFF_BAD_CODE.rawValue: return "corrupt data (bad Huffman code)"
        case JWRN_ARITH_BAD_CODE.rawValue: return "corrupt data (bad arithmetic code)"
        case JWRN_MUST_RESYNC.rawValue: return "corrupt data (a restart marker is missing)"
        case JWRN_BOGUS_PROGRESSION.rawValue: return "corrupt data (inconsistent progression sequence)"
        default: return "corrupt data (libjpeg warning \(code))"
        }
    }
}
