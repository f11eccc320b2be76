import ImageCacheProtocol

/// Params that can be read straight from a request's members, for the hottest requests.
///
/// `StrictParamsDecoder` goes through `Decoder` containers and records every key it reads, to
/// find unknown ones; for `thumbnail.show` — a cache hit's request — that was the largest
/// single cost of the answer. A type conforming here reads the plain case by hand and returns
/// nil for anything else (a member of another type, a null, an unknown name, two references):
/// the strict decoder then runs as before, so every error and its wording still come from
/// one place. A differential test holds the two to the same value wherever the hand path
/// accepts.
protocol DirectParams {
    /// The params, when `members` is the plain, valid case; nil to take the strict decoder.
    static func direct(_ members: [String: JSONValue]) -> Self?
}

extension ThumbnailShowParams: DirectParams {
    static func direct(_ members: [String: JSONValue]) -> ThumbnailShowParams? {
        guard case .int(let slot)? = members["slot"] else { return nil }
        var read = 2  // slot and the image reference
        let image: ImageReference
        switch (members["photo"], members["url"]) {
        case (.string(let id)?, nil): image = .photo(id)
        case (nil, .string(let url)?): image = .url(url)
        default: return nil
        }
        var params = ThumbnailShowParams(slot: slot, image: image)
        switch members["size"] {
        case nil: break
        case .int(let size)?: params.size = size; read += 1
        default: return nil
        }
        switch members["inline"] {
        case nil: break
        case .bool(let inline)?: params.inline = inline; read += 1
        default: return nil
        }
        switch members["view"] {
        case nil: break
        case .string(let view)?: params.view = view; read += 1
        default: return nil
        }
        // Anything not read above is unknown (or a null): the strict decoder says which.
        return read == members.count ? params : nil
    }
}
