import ImageCacheProtocol

/// Params a `RequestScanner` reads in place, for the hottest request.
///
/// A route whose params conform is offered the plain lines of its method before any JSON
/// tree is built (`RPCRouter.scan`): a memory-hit `thumbnail.show` is parsed in one pass from
/// bytes to its params. `scan` accepts only what the strict decoder would decode to the same
/// value and declines (nil) everything else: a null, a member of another type, an unknown
/// name, two image references. The line then takes the general path, where the strict
/// decoder decodes it or says precisely what is wrong.
protocol ScannableParams: Decodable & Sendable {
    /// The params object at the scanner's position, read whole; nil to take the general path.
    static func scan(_ scanner: inout RequestScanner) -> Self?
}

extension ThumbnailShowParams: ScannableParams {
    static func scan(_ scanner: inout RequestScanner) -> ThumbnailShowParams? {
        var slot: Int?, photo: String?, url: String?, size: Int?, inline: Bool?, view: String?
        // Each member once: a repeated one is the general path's to judge.
        let read = scanner.object { scanner, key in
            if RequestScanner.key(key, is: "slot") { return RequestScanner.once(&slot) { scanner.integer() } }
            if RequestScanner.key(key, is: "url") { return RequestScanner.once(&url) { scanner.string() } }
            if RequestScanner.key(key, is: "size") { return RequestScanner.once(&size) { scanner.integer() } }
            if RequestScanner.key(key, is: "inline") { return RequestScanner.once(&inline) { scanner.bool() } }
            if RequestScanner.key(key, is: "photo") { return RequestScanner.once(&photo) { scanner.string() } }
            if RequestScanner.key(key, is: "view") { return RequestScanner.once(&view) { scanner.string() } }
            return false
        }
        guard read, let slot else { return nil }
        let image: ImageReference
        switch (photo, url) {
        case (let id?, nil): image = .photo(id)
        case (nil, let url?): image = .url(url)
        default: return nil
        }
        return ThumbnailShowParams(slot: slot, image: image, size: size, inline: inline ?? false, view: view ?? SlotView.main)
    }
}
