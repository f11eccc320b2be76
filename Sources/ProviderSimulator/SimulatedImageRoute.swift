import ImageCacheSupport

/// Serves the image URLs the provider-API simulator hands out:
/// `/img/<w>x<h>/<seed>.jpg` is a JPEG of exactly w×h pixels, and `?w=N` asks for it N pixels
/// wide with the height scaled (the Unsplash `raw` + `w` form).
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
        let body = cache.withLock { entries -> [UInt8]? in entries[Key(width: width, height: height, seed: seed)] }
            ?? generate(width: width, height: height, seed: seed)
        return SimulatedResponse(status: 200, headers: [("Content-Type", "image/jpeg"), ("ETag", "\"\(parts[2])-\(width)\"")],
                                 body: body)
    }

    /// The route as a `LoopbackHTTPServer` handler (404 for other paths).
    public static let handler: LoopbackHTTPServer.Handler = { request in
        handle(request) ?? .text("not found\n", status: 404)
    }

    private struct Key: Hashable {
        var width: Int
        var height: Int
        var seed: UInt64
    }

    /// Recently generated bodies: a grid asks for the same thumbnails again and again.
    private static let cache = LockedState<[Key: [UInt8]]>([:])

    private static func generate(width: Int, height: Int, seed: UInt64) -> [UInt8] {
        let body = SyntheticImages.jpeg(width: width, height: height, seed: seed, quality: 82)
        cache.withLock { entries in
            if entries.count >= 256 { entries.removeAll(keepingCapacity: true) }
            entries[Key(width: width, height: height, seed: seed)] = body
        }
        return body
    }

    private static func queryWidth(_ uri: String) -> Int? {
        guard let query = uri.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix("w=") {
            return Int(pair.dropFirst(2))
        }
        return nil
    }
}
