import ImageCacheProtocol

/// Reads one Unsplash photo object into a `ProviderPhoto`.
///
/// Required: `id`, `urls.raw`/`full`/`thumb` (without them there is nothing to show).
/// Everything else is optional and varies by year (`blur_hash`, `sponsorship`…). Page and
/// profile links get `utm_source=<app>&utm_medium=referral`, as Unsplash's guidelines ask.
enum UnsplashDecoding {
    /// Nominal widths of Unsplash's fixed sizes (`thumb` 200, `small` 400, `regular` 1080).
    static let nominalWidths: [(String, Int)] = [("thumb", 200), ("small", 400), ("regular", 1080)]

    static func photo(_ json: LenientJSON, appName: String, details: Bool) throws -> ProviderPhoto {
        var notes = DecodeNotes()
        return try photo(json, appName: appName, details: details, notes: &notes)
    }

    static func photo(_ json: LenientJSON, appName: String, details: Bool, notes: inout DecodeNotes) throws -> ProviderPhoto {
        let rawID = try json.requiredString("id")
        let urls = json["urls"]
        guard urls.isObject else { throw LenientJSON.MissingField(field: "urls") }
        let raw = try urls.requiredString("raw", path: "urls.")
        let full = try urls.requiredString("full", path: "urls.")
        let thumb = try urls.requiredString("thumb", path: "urls.")
        let width = json["width"].int
        let height = json["height"].int
        let attribution = [("utm_source", appName), ("utm_medium", "referral")]

        let user = json["user"]
        let author = Photo.Author(
            name: user["name"].text ?? user["username"].text ?? "Unknown",
            profileURL: (user["links"]["html"].text ?? user["username"].text.map { "https://unsplash.com/@\($0)" })
                .map { URLBuilding.appending(attribution, to: $0) })

        var variants: [ImageVariant] = []
        for (name, nominal) in nominalWidths {
            guard let url = urls[name].text else { continue }
            let w = width.map { min($0, nominal) } ?? nominal
            variants.append(ImageVariant(name: name, url: url, width: w, height: scaledHeight(w, width, height)))
        }
        variants.append(ImageVariant(name: "full", url: full, width: width, height: height))

        var photo = Photo(
            id: "unsplash:\(rawID)", provider: "unsplash", width: width, height: height,
            thumbURL: thumb, fullURL: full, author: author,
            likes: json["likes"].int,
            description: json["description"].text ?? json["alt_description"].text,
            pageURL: json["links"]["html"].text.map { URLBuilding.appending(attribution, to: $0) })
        // Placeholders as Unsplash sends them, when they are what they claim to be.
        photo.blurHash = json["blur_hash"].text.flatMap { (try? BlurHash.parse($0)) != nil ? $0 : nil }
        photo.color = json["color"].text.flatMap(PlaceholderColor.normalised)
        // `created_at` is when the photo was posted; Unsplash says nothing of when it was taken.
        photo.uploadedAt = ProviderDates.iso8601(json["created_at"])
        // A paid placement: `sponsorship` (since 2019) or the older `sponsored: true`.
        let sponsorship = json["sponsorship"]
        if sponsorship.isObject || json["sponsored"].bool == true {
            photo.sponsored = true
            photo.sponsor = sponsorship["sponsor"]["name"].text ?? json["sponsored_by"]["name"].text
        }
        // Search results carry `tags` in some years' answers; every detail answer does.
        photo.tags = (json["tags"].array ?? []).compactMap { $0["title"].text }
        PhotoFieldLimits.bound(&photo, notes: &notes)
        if details {
            photo.views = json["views"].int
            photo.downloads = json["downloads"].int
            let exif = json["exif"]
            let e = Photo.EXIF(make: exif["make"].text, model: exif["model"].text,
                               exposureTime: exif["exposure_time"].text, aperture: exif["aperture"].text,
                               focalLength: exif["focal_length"].text, iso: exif["iso"].int)
            photo.exif = e == Photo.EXIF() ? nil : e
            let location = json["location"]
            let city = location["city"].text, country = location["country"].text
            photo.location = city == nil && country == nil ? nil : Photo.Location(city: city, country: country)
        }
        return ProviderPhoto(photo: photo, variants: variants, resizableURL: raw,
                             downloadLocation: json["links"]["download_location"].text)
    }

    static func scaledHeight(_ w: Int, _ width: Int?, _ height: Int?) -> Int? {
        guard let width, let height else { return nil }
        return Proportion.rescale(height, numerator: w, denominator: width)
    }
}
