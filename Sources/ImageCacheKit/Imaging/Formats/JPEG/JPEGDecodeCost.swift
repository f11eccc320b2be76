import ImageCacheProtocol

extension DecodeCost {
    /// A JPEG decode to `scaled` size: its output, the CMYK→RGB copy, and the coefficients
    /// libjpeg keeps (all of them for a multi-scan frame, one MCU row otherwise).
    /// - Parameter allCoefficients: whether libjpeg keeps every coefficient; by default,
    ///   whether the survey saw a progressive frame or several scans (a streaming decode knows
    ///   it from libjpeg at the first scan, before the survey has seen the others).
    static func jpegDecode(_ survey: JPEGScanSurvey, scaledWidth: Int, scaledHeight: Int,
                           allCoefficients: Bool? = nil) -> Int {
        let channels = survey.components.count == 4 ? 4 : (survey.components.count == 1 ? 1 : 3)
        let pixels = scaledWidth.multipliedClamped(by: scaledHeight)
        var bytes = pixels.multipliedClamped(by: channels)
        if channels == 4 { bytes = bytes.addingClamped(pixels.multipliedClamped(by: 3)) }
        let blockBytes = 64 * 2
        if allCoefficients ?? (survey.isProgressive || survey.scanCount > 1) {
            bytes = bytes.addingClamped(survey.totalBlocks.multipliedClamped(by: blockBytes))
        } else {
            let maxV = survey.components.map(\.vertical).max() ?? 1
            let across = survey.components.reduce(0) { $0.addingClamped(survey.blocksAcross(of: $1)) }
            // One MCU row of coefficients plus the upsampling and colour buffers of a row group.
            bytes = bytes.addingClamped(across.multipliedClamped(by: maxV * blockBytes))
                .addingClamped(scaledWidth.multipliedClamped(by: 16 * max(1, survey.components.count)))
        }
        return bytes
    }
}
