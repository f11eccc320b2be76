import CTurboJPEG
import ImageCacheProtocol

/// Encodes thumbnails as baseline JPEG with TurboJPEG (4:2:0 for colour, the size browsers
/// expect), and splices an ICC profile back in as APP2 segments.
///
/// TurboJPEG 2.1 cannot attach an ICC profile itself (that arrived with the 3.0 API), yet a
/// wide-gamut photo shown without its profile loses its colours, so the segments are
/// written here, right after the JFIF header, in the standard "ICC_PROFILE" chunking.
enum JPEGEncoder {
    static func encode(_ image: PixelBuffer, quality: Int, iccProfile: [UInt8]?) throws(ImagingError) -> [UInt8] {
        guard let handle = tjInitCompress() else {
            throw ImagingError.library("TurboJPEG could not allocate a compressor")
        }
        defer { tjDestroy(handle) }
        let format = image.channels == 1 ? TJPF_GRAY : TJPF_RGB
        let subsampling = image.channels == 1 ? TJSAMP_GRAY : TJSAMP_420
        precondition(image.channels == 1 || image.channels == 3, "JPEG has no alpha channel")
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let rc = image.pixels.withUnsafeBufferPointer { source in
            tjCompress2(handle, source.baseAddress, Int32(image.width), 0, Int32(image.height), Int32(format.rawValue),
                        &output, &size, Int32(subsampling.rawValue), Int32(min(100, max(1, quality))), 0)
        }
        defer { if let output { tjFree(output) } }
        guard rc == 0, let output else {
            throw ImagingError.library("TurboJPEG could not encode a thumbnail: \(String(cString: tjGetErrorStr2(handle)))")
        }
        let encoded = [UInt8](UnsafeBufferPointer(start: output, count: Int(size)))
        guard let profile = iccProfile, !profile.isEmpty else { return encoded }
        return insertICCProfile(profile, into: encoded)
    }

    /// Most profile bytes one APP2 segment can hold (65535 − length field − 14-byte header).
    static let iccChunkCapacity = 65_519

    /// `jpeg` with `profile` as APP2 segments after SOI and any APP0 (JFIF must stay first).
    static func insertICCProfile(_ profile: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
        let chunkCount = (profile.count + iccChunkCapacity - 1) / iccChunkCapacity
        guard chunkCount <= 255, jpeg.count >= 4 else { return jpeg }
        var insertAt = 2
        if jpeg.count >= 6 && jpeg[2] == 0xFF && jpeg[3] == 0xE0 {
            insertAt = 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5]))
        }
        var segments: [UInt8] = []
        segments.reserveCapacity(profile.count + chunkCount * 18)
        for chunk in 0..<chunkCount {
            let part = profile[(chunk * iccChunkCapacity)..<min(profile.count, (chunk + 1) * iccChunkCapacity)]
            let length = 2 + JPEGMetadata.iccSignature.count + 2 + part.count
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)]
            segments += JPEGMetadata.iccSignature
            segments += [UInt8(chunk + 1), UInt8(chunkCount)]
            segments += part
        }
        return Array(jpeg[..<insertAt]) + segments + jpeg[insertAt...]
    }
}
