/// Tells TurboJPEG 2.1's warnings from its fatal errors, by the message text.
///
/// In 2.1.5, `tjDecompress2` returns -1 both when decoding failed and when it succeeded with
/// a warning, and `tjGetErrorCode` cannot tell them apart: its warning flag is sticky, so a
/// file that warned ("extraneous bytes") and then failed ("Bogus Huffman table definition")
/// still reports `TJERR_WARNING`. The message is reliable, though: a fatal error always
/// writes its message last and stops, so when the last message is one of libjpeg's warnings
/// (the `JWRN_*` texts of jerror.h, unchanged for decades) no fatal error happened.
enum TurboJPEGDiagnostics {
    /// Starts of every libjpeg-turbo 2.1 warning message (`JWRN_*`).
    static let warningPrefixes = [
        "Corrupt JPEG data",                          // extraneous bytes, premature end of segment, bad codes, RST resync, bad ICC
        "Premature end of JPEG file",                 // JWRN_JPEG_EOF (truncation: refused separately by the EOI check)
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
}
