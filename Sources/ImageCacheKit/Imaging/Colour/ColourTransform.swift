import CLCMS2

/// Converts decoded pixels from the colours an image declares to sRGB with LittleCMS 2, so a
/// Display P3 or Adobe RGB photo keeps its colours in a thumbnail that carries no profile.
///
/// The declaration is outside input: an embedded ICC profile (JPEG APP2, PNG iCCP) or PNG's
/// cHRM primaries with its gAMA. A profile over `maxProfileBytes`, one LittleCMS cannot parse
/// or that does not describe the pixels (a CMYK profile on RGB pixels, a device link, an
/// abstract or named-colour profile), or any error LittleCMS reports while building the
/// transform, makes `init` return nil: the caller then takes the pixels as sRGB, as browsers
/// without colour management do. So does a profile that is sRGB already (`isSRGB`): most
/// embedded profiles are ("sRGB IEC61966-2.1" from cameras and editors), and converting
/// through one changes no pixel but cost ≈ 4 ms a picture to build. Nothing here can trap on
/// a profile's values.
///
/// Cost: building a transform parses the profile and, for 8-bit pixels, precomputes LittleCMS'
/// optimised pipeline (measured in docs/benchmarks.md, "Colour management"); applying it is
/// linear in the pixels, which are the decode's (at the DCT scale, or a PNG's bands), bounded
/// by the pixel limit and `DecodeCost` (which counts `memoryBytes`).
/// Immutable once built, and applied without LittleCMS' one-pixel cache, so one transform is
/// safely shared across threads (`ColourTransformCache`).
final class ColourTransform: @unchecked Sendable {
    /// The pixel layouts the decoders produce.
    enum Layout: Equatable {
        case grey
        case rgb
        /// RGB plus straight alpha, which is copied unchanged.
        case rgba
        /// CMYK as TurboJPEG decodes it; `inverted` for Adobe-written files (255 = no ink).
        case cmyk(inverted: Bool)

        /// Bytes per pixel in, and out (CMYK becomes RGB).
        var inputChannels: Int {
            switch self {
            case .grey: return 1
            case .rgb: return 3
            case .rgba, .cmyk: return 4
            }
        }

        var outputChannels: Int {
            switch self {
            case .grey: return 1
            case .rgb, .cmyk: return 3
            case .rgba: return 4
            }
        }
    }

    /// What an image declares about its colours.
    enum Source {
        /// An embedded ICC profile.
        case icc([UInt8])
        /// PNG cHRM's white point and primaries (CIE x, y) and gAMA's encoding gamma (nil
        /// without gAMA: the sRGB curve is assumed).
        case primaries(white: (x: Double, y: Double), red: (x: Double, y: Double), green: (x: Double, y: Double),
                       blue: (x: Double, y: Double), gamma: Double?)
    }

    /// Largest profile converted through (4 MiB: real RGB profiles are 0.5–60 KiB, print
    /// CMYK profiles up to about 2 MiB); a larger one is ignored (taken as sRGB).
    static let maxProfileBytes = 4 << 20

    /// Bytes a transform may allocate besides the profile: LittleCMS' context, the parsed
    /// sRGB profile and the optimised 8-bit pipeline (a CMYK 17⁴ or RGB 33³ table of 16-bit
    /// entries at most, ≈ 0.5 MiB), rounded up.
    static let workingBytes = 2 << 20

    /// What a transform from a profile of `profileBytes` holds at most: the profile's bytes
    /// twice (the caller's copy and LittleCMS' parsed tags) and `workingBytes`.
    static func memoryBytes(profileBytes: Int) -> Int {
        guard profileBytes > 0 else { return 0 }
        return min(profileBytes, maxProfileBytes).multipliedClamped(by: 2).addingClamped(workingBytes)
    }

    let layout: Layout
    /// Whether the source was an RGB or grey matrix/curve profile, whose optimised transform
    /// is a few KiB of tables: such transforms are kept across pictures (`ColourTransformCache`).
    let isMatrixShaper: Bool
    private let context: cmsContext
    private let transform: cmsHTRANSFORM
    private let errors: UnsafeMutablePointer<Int32>

    /// A transform from `source` to sRGB for pixels in `layout`, or nil when the source
    /// cannot be used (see the type's comment).
    init?(from source: Source, layout: Layout) {
        let errors = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        errors.initialize(to: 0)
        guard let context = ic_lcms_context(errors) else {
            errors.deallocate()
            return nil
        }
        guard let input = Self.profile(source, context: context) else {
            cmsDeleteContext(context)
            errors.deallocate()
            return nil
        }
        defer { cmsCloseProfile(input) }
        let output = layout == .grey ? Self.sRGBGrey(context) : cmsCreate_sRGBProfileTHR(context)
        defer { if let output { cmsCloseProfile(output) } }
        let transform: cmsHTRANSFORM? = output.flatMap { output in
            // A profile that is sRGB already needs no transform: nil, the pixels are sRGB.
            guard Self.describes(input, layout), !Self.isSRGB(input, reference: output, layout: layout) else { return nil }
            let (inFormat, outFormat, flags) = Self.formats(layout)
            // No one-pixel cache: a transform is shared by the threads that decode pictures
            // with the same profile (`ColourTransformCache`), and the 8-bit optimised
            // pipelines do not use that cache anyway.
            return cmsCreateTransformTHR(context, input, inFormat, output, outFormat, IC_INTENT_PERCEPTUAL,
                                         flags | IC_FLAGS_NOCACHE)
        }
        guard let transform, errors.pointee == 0 else {
            if let transform { cmsDeleteTransform(transform) }
            cmsDeleteContext(context)
            errors.deallocate()
            return nil
        }
        self.layout = layout
        self.isMatrixShaper = cmsIsMatrixShaper(input) != 0
        self.context = context
        self.transform = transform
        self.errors = errors
    }

    deinit {
        cmsDeleteTransform(transform)
        cmsDeleteContext(context)
        errors.deallocate()
    }

    /// Converts `pixelCount` pixels of `pixels` in place (grey, RGB, RGBA: the size stays).
    func apply(_ pixels: inout [UInt8], pixelCount: Int) {
        precondition(layout.inputChannels == layout.outputChannels, "a CMYK transform changes the size: use converted(_:)")
        let count = min(pixelCount, pixels.count / layout.inputChannels)
        guard count > 0 else { return }
        pixels.withUnsafeMutableBytes { buffer in
            cmsDoTransform(transform, buffer.baseAddress, buffer.baseAddress, UInt32(clamping: count))
        }
    }

    /// The RGB pixels of `pixelCount` CMYK (or any layout's) input pixels.
    func converted(_ pixels: [UInt8], pixelCount: Int) -> [UInt8] {
        let count = min(pixelCount, pixels.count / layout.inputChannels)
        var output = [UInt8](repeating: 0, count: count * layout.outputChannels)
        guard count > 0 else { return output }
        pixels.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { target in
                cmsDoTransform(transform, source.baseAddress, target.baseAddress, UInt32(clamping: count))
            }
        }
        return output
    }

    // MARK: Building

    private static func profile(_ source: Source, context: cmsContext) -> cmsHPROFILE? {
        switch source {
        case .icc(let bytes):
            guard !bytes.isEmpty, bytes.count <= maxProfileBytes else { return nil }
            return bytes.withUnsafeBytes { raw in
                cmsOpenProfileFromMemTHR(context, raw.baseAddress, UInt32(raw.count))
            }
        case .primaries(let white, let red, let green, let blue, let gamma):
            let values = [white.x, white.y, red.x, red.y, green.x, green.y, blue.x, blue.y]
            // Chromaticities are in (0, 1); anything else (zero, NaN, inf) is no colour space.
            guard values.allSatisfy({ $0.isFinite && $0 > 0 && $0 < 1 }) else { return nil }
            let curve: OpaquePointer?
            if let gamma {
                guard gamma.isFinite, gamma >= 0.1, gamma <= 10 else { return nil }
                curve = cmsBuildGamma(context, 1 / gamma)
            } else {
                curve = sRGBCurve(context)
            }
            guard let curve else { return nil }
            defer { cmsFreeToneCurve(curve) }
            var whitePoint = cmsCIExyY(x: white.x, y: white.y, Y: 1)
            var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: red.x, y: red.y, Y: 1),
                                            Green: cmsCIExyY(x: green.x, y: green.y, Y: 1),
                                            Blue: cmsCIExyY(x: blue.x, y: blue.y, Y: 1))
            var curves: [OpaquePointer?] = [curve, curve, curve]
            return curves.withUnsafeMutableBufferPointer { curves in
                cmsCreateRGBProfileTHR(context, &whitePoint, &primaries, curves.baseAddress)
            }
        }
    }

    /// Whether `profile` can describe pixels in `layout`: its data colour space matches, and
    /// it is a device or colour-space profile (not a link, abstract or named-colour one).
    private static func describes(_ profile: cmsHPROFILE, _ layout: Layout) -> Bool {
        let space = cmsGetColorSpace(profile)
        let expected: cmsColorSpaceSignature
        switch layout {
        case .grey: expected = cmsSigGrayData
        case .rgb, .rgba: expected = cmsSigRgbData
        case .cmyk: expected = cmsSigCmykData
        }
        let usable: [cmsProfileClassSignature] = [cmsSigInputClass, cmsSigDisplayClass, cmsSigOutputClass,
                                                  cmsSigColorSpaceClass]
        return space == expected && usable.contains(cmsGetDeviceClass(profile))
    }

    /// Whether `profile` is sRGB in all but its bytes: an RGB matrix/curve profile whose
    /// colorants are `reference`'s (sRGB's, D50-adapted, within 0.0005) and whose three curves,
    /// followed by sRGB's inverse curve, bring every 8-bit level back to itself. Converting
    /// through such a profile is the identity up to rounding (`ColourManagementTests` checks it
    /// against LittleCMS' own conversion).
    static func isSRGB(_ profile: cmsHPROFILE, reference: cmsHPROFILE, layout: Layout) -> Bool {
        guard layout == .rgb || layout == .rgba, cmsIsMatrixShaper(profile) != 0 else { return false }
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let colorant = cmsReadTag(profile, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee,
                  let expected = cmsReadTag(reference, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee,
                  abs(colorant.X - expected.X) <= 0.0005, abs(colorant.Y - expected.Y) <= 0.0005,
                  abs(colorant.Z - expected.Z) <= 0.0005 else { return false }  // NaN fails too
        }
        guard let sRGBCurve = cmsReadTag(reference, cmsSigRedTRCTag).map({ OpaquePointer($0) }),
              let inverse = cmsReverseToneCurve(sRGBCurve) else { return false }
        defer { cmsFreeToneCurve(inverse) }
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let curve = cmsReadTag(profile, tag).map({ OpaquePointer($0) }) else { return false }
            for level in 0...255 {
                let back = cmsEvalToneCurveFloat(inverse, cmsEvalToneCurveFloat(curve, Float(level) / 255)) * 255
                guard abs(back - Float(level)) < 0.5 else { return false }  // NaN fails too
            }
        }
        return true
    }

    private static func formats(_ layout: Layout) -> (UInt32, UInt32, UInt32) {
        switch layout {
        case .grey: return (IC_TYPE_GRAY_8, IC_TYPE_GRAY_8, 0)
        case .rgb: return (IC_TYPE_RGB_8, IC_TYPE_RGB_8, 0)
        case .rgba: return (IC_TYPE_RGBA_8, IC_TYPE_RGBA_8, IC_FLAGS_COPY_ALPHA)
        case .cmyk(let inverted): return (inverted ? IC_TYPE_CMYK_8_REV : IC_TYPE_CMYK_8, IC_TYPE_RGB_8, 0)
        }
    }

    /// The sRGB transfer curve (IEC 61966-2-1), LittleCMS' parametric type 4.
    private static func sRGBCurve(_ context: cmsContext) -> OpaquePointer? {
        let parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        return parameters.withUnsafeBufferPointer { cmsBuildParametricToneCurve(context, 4, $0.baseAddress) }
    }

    /// Grey with sRGB's white and transfer curve: what a grey thumbnail is, like sRGB is for colour.
    private static func sRGBGrey(_ context: cmsContext) -> cmsHPROFILE? {
        guard let curve = sRGBCurve(context) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1)
        return cmsCreateGrayProfileTHR(context, &white, curve)
    }
}
