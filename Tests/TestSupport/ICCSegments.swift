/// Embeds an ICC profile in a JPEG as APP2 "ICC_PROFILE" segments (the standard chunking,
/// right after SOI and any JFIF APP0), for tests that need profiled or oversized-profile
/// images. The daemon itself never writes a profile: its thumbnails are sRGB.
public enum ICCSegments {
    /// Most profile bytes one APP2 segment can hold (65535 − length field − 14-byte header).
    public static let chunkCapacity = 65_519

    /// `jpeg` with `profile` inserted (unchanged when the profile needs over 255 segments).
    public static func inserting(_ profile: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
        let signature = Array("ICC_PROFILE".utf8) + [0]
        let chunkCount = (profile.count + chunkCapacity - 1) / chunkCapacity
        guard chunkCount <= 255, jpeg.count >= 4 else { return jpeg }
        var insertAt = 2
        if jpeg.count >= 6 && jpeg[2] == 0xFF && jpeg[3] == 0xE0 {
            insertAt = 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5]))
        }
        var segments: [UInt8] = []
        for chunk in 0..<chunkCount {
            let part = profile[(chunk * chunkCapacity)..<min(profile.count, (chunk + 1) * chunkCapacity)]
            let length = 2 + signature.count + 2 + part.count
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)]
            segments += signature
            segments += [UInt8(chunk + 1), UInt8(chunkCount)]
            segments += part
        }
        return Array(jpeg[..<insertAt]) + segments + jpeg[insertAt...]
    }
}
