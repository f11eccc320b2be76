import ImageCacheSupport

/// Serves the image URLs the provider-API simulator hands out:
/// `/img/<w>x<h>/<seed>.jpg` is a JPEG of exactly w×h pixels, and `?w=N` asks for it N pixels
/// wide with the height scaled (the Unsplash `raw` + `w` form). Like imgix, `fm=webp` and
/// `fm=avif` transcode (encoded on the spot with libwebp and libavif/libaom), and `q=1…100`
/// sets the quality of any format (82 when absent).
///
/// The pictures are generated deterministically from the seed, so every run and machine sees
/// the same bytes, and their dimensions are those the API answers claimed — what a layout
/// built from decoded dimensions must find. Sizes are bounded so a URL cannot make the
/// simulator allocate without limit.
public enum SimulatedImageRoute {
    /// The largest side and pixel count the route will generate.
    public static let maxSide = 8000
    public static let maxPixels = 40_000_000

    /// Answers an `/img/…` request, or nil for any other path (so it composes as a fallback).
    public static func handle(_ request: SimulatedRequest) -> SimulatedResponse? {
        let parts = request.path.split(separator: "/")
        guard parts.count == 3, parts[0] == "img" else { return nil }
        let size = parts[1].split(separator: "x")
        guard size.count == 2, var width = Int(size[0]), var height = Int(size[1]),
              parts[2].hasSuffix(".jpg"), let seed = UInt64(parts[2].dropLast(4), radix: 16) else {
            return .text("malformed image path \(request.path)\n", status: 404)
        }
        if let requested = queryWidth(request.uri), requested > 0, requested < width {
            height = max(1, (height * requested + width / 2) / width)
            width = requested
        }
        guard width > 0, height > 0, width <= maxSide, height <= maxSide, width * height <= maxPixels else {
            return .text("image size \(width)x\(height) is outside what the simulator generates\n", status: 404)
        }
        let format = OutputFormat(rawValue: queryValue(request.uri, "fm") ?? "jpg") ?? .jpg
        let quality = queryValue(request.uri, "q").flatMap { Int($0) }.map { max(1, min(100, $0)) } ?? 82
        let key = Key(width: width, height: height, seed: seed, format: format, quality: quality)
        let body = cache.withLock { entries -> [UInt8]? in entries[key] } ?? generate(key)
        let tag = "\"\(parts[2])-\(width)\(format == .jpg ? "" : "-" + format.rawValue)\(quality == 82 ? "" : "-q\(quality)")\""
        return SimulatedResponse(status: 200, headers: [("Content-Type", format.mimeType), ("ETag", tag)], body: body)
    }

    /// The route as a `LoopbackHTTPServer` handler (404 for other paths).
    public static let handler: LoopbackHTTPServer.Handler = { request in
        handle(request) ?? .text("not found\n", status: 404)
    }

    /// The `fm` values served (imgix's names); anything else is JPEG.
    enum OutputFormat: String, Hashable {
        case jpg, webp, avif
        var mimeType: String { self == .jpg ? "image/jpeg" : "image/" + rawValue }
    }

    private struct Key: Hashable {
        var width: Int
        var height: Int
        var seed: UInt64
        var format: OutputFormat
        var quality: Int
    }

    /// Recently generated bodies: a grid asks for the same thumbnails again and again.
    private static let cache = LockedState<[Key: [UInt8]]>([:])

    private static func generate(_ key: Key) -> [UInt8] {
        let body: [UInt8]
        switch key.format {
        case .jpg: body = SyntheticImages.jpeg(width: key.width, height: key.height, seed: key.seed, quality: Int32(key.quality))
        case .webp: body = SyntheticImages.webp(width: key.width, height: key.height, seed: key.seed, quality: key.quality)
        case .avif: body = SyntheticImages.avif(width: key.width, height: key.height, seed: key.seed, quality: key.quality)
        }
        cache.withLock { entries in
            if entries.count >= 256 { entries.removeAll(keepingCapacity: true) }
            entries[key] = body
        }
        return body
    }

    private static func queryWidth(_ uri: String) -> Int? {
        queryValue(uri, "w").flatMap { Int($0) }
    }

    /// The first value of `name` in the URI's query.
    private static func queryValue(_ uri: String, _ name: String) -> String? {
        guard let query = uri.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix(name + "=") {
            return String(pair.dropFirst(name.count + 1))
        }
        return nil
    }
}
