import Foundation
import ImageCacheProtocol

/// Reads Flickr photo records: the `url_*`/`width_*`/`height_*` extras of a search, or the
/// `flickr.photos.getInfo` object.
///
/// Flickr's size letters do not match its URL suffixes: `url_s` is the 240 px image with
/// suffix `_m`, `url_m` the 500 px one with no suffix, `url_l` is `_b`; `h`, `k` and `o` are
/// served under their own secrets, so they can only be used when the answer gives their URL.
/// A URL is built (`live.staticflickr.com/{server}/{id}_{secret}_{suffix}.jpg`) only for a
/// size the answer did not list and only from the sizes that share the photo's `secret`.
enum FlickrDecoding {
    /// One Flickr size: the `url_<key>` extra, its URL suffix, its nominal longest edge, and
    /// whether it may be built from `secret` (false for h/k/o).
    struct Size: Sendable {
        let key: String
        let suffix: String
        let longestEdge: Int?
        let buildable: Bool
    }

    /// The non-square sizes, smallest first (`sq`/`q` are square crops, wrong for a grid that
    /// keeps aspect ratios, so they are not asked for).
    static let sizes: [Size] = [
        Size(key: "t", suffix: "_t", longestEdge: 100, buildable: true),
        Size(key: "s", suffix: "_m", longestEdge: 240, buildable: true),
        Size(key: "n", suffix: "_n", longestEdge: 320, buildable: true),
        Size(key: "m", suffix: "", longestEdge: 500, buildable: true),
        Size(key: "z", suffix: "_z", longestEdge: 640, buildable: true),
        Size(key: "c", suffix: "_c", longestEdge: 800, buildable: true),
        Size(key: "l", suffix: "_b", longestEdge: 1024, buildable: true),
        Size(key: "h", suffix: "_h", longestEdge: 1600, buildable: false),
        Size(key: "k", suffix: "_k", longestEdge: 2048, buildable: false),
        Size(key: "o", suffix: "_o", longestEdge: nil, buildable: false),
    ]

    /// The static image host URLs are built on.
    static let imageHost = "https://live.staticflickr.com"

    static func buildURL(server: String, id: String, secret: String, suffix: String, format: String = "jpg") -> String {
        "\(imageHost)/\(server)/\(id)_\(secret)\(suffix).\(format)"
    }

    /// A photo of a search or getRecent answer.
    static func searchPhoto(_ json: LenientJSON) throws -> ProviderPhoto {
        var notes = DecodeNotes()
        return try searchPhoto(json, notes: &notes)
    }

    /// A photo of a search answer, noting the fields left out over their bounds.
    static func searchPhoto(_ json: LenientJSON, notes: inout DecodeNotes) throws -> ProviderPhoto {
        let rawID = try json.requiredString("id")
        let owner = json["owner"].text
        var variants: [ImageVariant] = []
        for size in sizes {
            guard let url = json["url_\(size.key)"].text else { continue }
            variants.append(ImageVariant(name: "url_\(size.key)", url: url,
                                         width: json["width_\(size.key)"].int, height: json["height_\(size.key)"].int,
                                         longestEdge: size.longestEdge))
        }
        // The original's size: o_dims, else url_o's, else the largest listed size.
        var width = json["o_width"].int
        var height = json["o_height"].int
        if width == nil || height == nil {
            let sized = variants.filter { $0.width != nil && $0.height != nil }
            let best = sized.first { $0.name == "url_o" } ?? sized.max { $0.width! < $1.width! }
            width = best?.width
            height = best?.height
        }
        if variants.isEmpty {
            let secret = try json.requiredString("secret")
            let server = try json.requiredString("server")
            variants = builtVariants(id: rawID, server: server, secret: secret, width: width, height: height)
        }
        let ownerName = json["ownername"].text ?? owner ?? "Unknown"
        let pathOwner = json["pathalias"].text ?? owner
        var photo = Photo(
            id: "flickr:\(rawID)", provider: "flickr", width: width, height: height,
            thumbURL: chooseThumb(variants), fullURL: variants.last!.url,
            author: Photo.Author(name: ownerName, profileURL: owner.map { "https://www.flickr.com/people/\($0)/" }),
            likes: json["count_faves"].int,
            description: json["description"]["_content"].text ?? json["title"].text,
            pageURL: pathOwner.map { "https://www.flickr.com/photos/\($0)/\(rawID)" })
        photo.views = json["views"].int
        // The `tags` extra: space-separated, lower-cased machine forms of the tags.
        photo.tags = (json["tags"].text ?? "").split(separator: " ").map(String.init)
        photo.uploadedAt = ProviderDates.unix(json["dateupload"])
        photo.takenAt = ProviderDates.flickrTaken(json["datetaken"], unknown: json["datetakenunknown"])
        PhotoFieldLimits.bound(&photo, notes: &notes)
        return ProviderPhoto(photo: photo, variants: variants)
    }

    /// The photo of a `flickr.photos.getInfo` answer, with its detail fields. getInfo gives no
    /// sizes, so its URLs are built; the registry merges in the sized URLs a search gave.
    static func infoPhoto(_ json: LenientJSON) throws -> ProviderPhoto {
        var notes = DecodeNotes()
        return try infoPhoto(json, notes: &notes)
    }

    /// The getInfo photo, noting the fields left out over their bounds. A video (`media:
    /// "video"`) keeps its still frame as its thumbnail but gets no full-image URL.
    static func infoPhoto(_ json: LenientJSON, notes: inout DecodeNotes) throws -> ProviderPhoto {
        guard json.isObject else { throw LenientJSON.MissingField(field: "photo") }
        let rawID = try json.requiredString("id")
        let secret = try json.requiredString("secret")
        let server = try json.requiredString("server")
        var variants = builtVariants(id: rawID, server: server, secret: secret, width: nil, height: nil)
        if let originalSecret = json["originalsecret"].text {
            let format = json["originalformat"].text ?? "jpg"
            variants.append(ImageVariant(name: "url_o", url: buildURL(server: server, id: rawID, secret: originalSecret,
                                                                     suffix: "_o", format: format),
                                         width: nil, height: nil))
        }
        let owner = json["owner"]
        let nsid = owner["nsid"].text
        let name = owner["realname"].text ?? owner["username"].text ?? nsid ?? "Unknown"
        let pageURL = (json["urls"]["url"].array ?? []).first { $0["type"].text == "photopage" }?["_content"].text
            ?? (owner["path_alias"].text ?? nsid).map { "https://www.flickr.com/photos/\($0)/\(rawID)" }
        var photo = Photo(
            id: "flickr:\(rawID)", provider: "flickr", width: nil, height: nil,
            thumbURL: chooseThumb(variants), fullURL: variants.last!.url,
            author: Photo.Author(name: name, profileURL: nsid.map { "https://www.flickr.com/people/\($0)/" }),
            likes: nil,
            description: json["description"]["_content"].text ?? json["title"]["_content"].text,
            pageURL: pageURL)
        // `posted` is the upload; `taken` the camera's date, unless Flickr says it does not know it.
        photo.uploadedAt = ProviderDates.unix(json["dates"]["posted"]) ?? ProviderDates.unix(json["dateuploaded"])
        photo.takenAt = ProviderDates.flickrTaken(json["dates"]["taken"], unknown: json["dates"]["takenunknown"])
        photo.tags = (json["tags"]["tag"].array ?? []).compactMap { $0["raw"].text ?? $0["_content"].text }
        photo.views = json["views"].int
        if json["media"].text == "video" {
            photo.media = .video
            photo.fullURL = nil
        }
        PhotoFieldLimits.bound(&photo, notes: &notes)
        let city = json["location"]["locality"]["_content"].text
        let country = json["location"]["country"]["_content"].text
        photo.location = city == nil && country == nil ? nil : Photo.Location(city: city, country: country)
        return ProviderPhoto(photo: photo, variants: variants)
    }

    /// URLs for the sizes that share `secret`, with exact sizes when the original's are known.
    static func builtVariants(id: String, server: String, secret: String, width: Int?, height: Int?) -> [ImageVariant] {
        sizes.filter(\.buildable).map { size in
            var w: Int?, h: Int?
            if let width, let height, let edge = size.longestEdge, width > 0, height > 0 {
                let scale = min(1, Double(edge) / Double(max(width, height)))
                w = Proportion.scale(width, by: scale)
                h = Proportion.scale(height, by: scale)
            }
            return ImageVariant(name: "url_\(size.key)", url: buildURL(server: server, id: id, secret: secret, suffix: size.suffix),
                                width: w, height: h, longestEdge: size.longestEdge)
        }
    }

    /// The grid thumbnail: the 240 px size when listed, else the smallest at least that big.
    static func chooseThumb(_ variants: [ImageVariant]) -> String {
        if let s = variants.first(where: { $0.name == "url_s" }) { return s.url }
        return (variants.first { ($0.rankingWidth ?? 0) >= 240 } ?? variants.last!).url
    }

    /// Removes a `jsonFlickrApi( … )` wrapper if present.
    static func stripJSONP(_ body: [UInt8]) -> [UInt8] {
        let prefix = Array("jsonFlickrApi(".utf8)
        var start = body.startIndex
        while start < body.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(body[start]) { start += 1 }
        guard body[start...].starts(with: prefix) else { return body }
        var end = body.endIndex
        while end > start, [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ";")].contains(body[end - 1]) { end -= 1 }
        guard end > start + prefix.count, body[end - 1] == UInt8(ascii: ")") else { return body }
        return Array(body[(start + prefix.count)..<(end - 1)])
    }
}
