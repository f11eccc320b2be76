import Foundation
import ImageCacheProtocol

/// Reads one Pixabay hit. Required: `id`, `previewURL`, `webformatURL` (a video hit of
/// `/api/videos/` has neither, so it is skipped, not shown blank).
///
/// `largeImageURL` is 1280 px on the longest side and `fullHDURL` 1920 (full API access only);
/// their exact sizes follow from the original's, which every hit gives.
enum PixabayDecoding {
    static func photo(_ hit: LenientJSON) throws -> ProviderPhoto {
        var notes = DecodeNotes()
        return try photo(hit, notes: &notes)
    }

    /// A hit, noting the fields left out over their bounds. Pixabay dates nothing, so a hit
    /// has neither `takenAt` nor `uploadedAt`.
    static func photo(_ hit: LenientJSON, notes: inout DecodeNotes) throws -> ProviderPhoto {
        let rawID = try hit.requiredString("id")
        let preview = try hit.requiredString("previewURL")
        let webformat = try hit.requiredString("webformatURL")
        let width = hit["imageWidth"].int
        let height = hit["imageHeight"].int

        var variants = [
            ImageVariant(name: "preview", url: preview, width: hit["previewWidth"].int, height: hit["previewHeight"].int,
                         longestEdge: 150),
            ImageVariant(name: "webformat", url: webformat, width: hit["webformatWidth"].int,
                         height: hit["webformatHeight"].int, longestEdge: 640),
        ]
        for (name, key, edge) in [("large", "largeImageURL", 1280), ("fullHD", "fullHDURL", 1920)] {
            guard let url = hit[key].text else { continue }
            let (w, h) = scaled(width, height, longestEdge: edge)
            variants.append(ImageVariant(name: name, url: url, width: w, height: h, longestEdge: edge))
        }
        if let original = hit["imageURL"].text {
            variants.append(ImageVariant(name: "original", url: original, width: width, height: height))
        }
        let full = hit["imageURL"].text ?? hit["fullHDURL"].text ?? hit["largeImageURL"].text ?? webformat
        let user = hit["user"].text
        let userID = hit["user_id"].string
        var photo = Photo(
            id: "pixabay:\(rawID)", provider: "pixabay", width: width, height: height,
            thumbURL: preview, fullURL: full,
            author: Photo.Author(name: user ?? "Unknown",
                                 profileURL: user.flatMap { u in userID.map { "https://pixabay.com/users/\(u)-\($0)/" } }),
            likes: hit["likes"].int, description: nil, pageURL: hit["pageURL"].text)
        let tags = (hit["tags"].text ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        photo.tags = tags
        photo.views = hit["views"].int
        photo.downloads = hit["downloads"].int
        PhotoFieldLimits.bound(&photo, notes: &notes)
        return ProviderPhoto(photo: photo, variants: variants)
    }

    /// The size of a rendition `longestEdge` px on its longest side (never upscaled).
    static func scaled(_ width: Int?, _ height: Int?, longestEdge: Int) -> (Int?, Int?) {
        guard let width, let height, width > 0, height > 0 else { return (nil, nil) }
        let scale = min(1, Double(longestEdge) / Double(max(width, height)))
        return (Proportion.scale(width, by: scale), Proportion.scale(height, by: scale))
    }
}
