/// A photo as every method returns it (docs/protocol.md, "Objects"), whatever provider it came from.
///
/// `id` is `"<provider>:<provider's id>"` so a photo can be named by id alone later: the
/// daemon remembers every photo it returned. Optional fields are null when the provider
/// does not say; they are never guessed.
public struct Photo: Sendable, Hashable, Codable {
    /// The photographer, with a link back to their profile as the providers' terms ask.
    public struct Author: Sendable, Hashable, Codable {
        /// The photographer's display name.
        public var name: String
        /// Their profile page (with attribution parameters for Unsplash), or null.
        public var profileURL: String?
        public init(name: String, profileURL: String?) {
            self.name = name
            self.profileURL = profileURL
        }
    }

    /// Camera settings, where the provider has them (`photo.get` only).
    public struct EXIF: Sendable, Hashable, Codable {
        /// Camera maker.
        public var make: String?
        /// Camera model.
        public var model: String?
        /// Shutter time as the provider writes it, e.g. "1/250".
        public var exposureTime: String?
        /// f-number as the provider writes it.
        public var aperture: String?
        /// Focal length as the provider writes it.
        public var focalLength: String?
        /// ISO speed.
        public var iso: Int?
        public init(make: String? = nil, model: String? = nil, exposureTime: String? = nil,
                    aperture: String? = nil, focalLength: String? = nil, iso: Int? = nil) {
            self.make = make
            self.model = model
            self.exposureTime = exposureTime
            self.aperture = aperture
            self.focalLength = focalLength
            self.iso = iso
        }
    }

    /// Where the photo was taken, where the provider has it (`photo.get` only).
    public struct Location: Sendable, Hashable, Codable {
        /// City, when known.
        public var city: String?
        /// Country, when known.
        public var country: String?
        public init(city: String?, country: String?) {
            self.city = city
            self.country = country
        }
    }

    /// What kind of item a provider answered, when it is not a photo.
    public enum Media: String, Sendable, Hashable, Codable {
        /// A video: its images are still frames, so it has no full-image URL and no download.
        case video
    }

    /// Whether this item is a video (docs/protocol.md, "Objects"): one check for every path
    /// that must not treat it as a photo.
    public var isVideo: Bool { media == .video }

    /// `"<provider>:<provider's id>"`, usable later by id alone.
    public var id: String
    /// `unsplash`, `flickr` or `pixabay`.
    public var provider: String
    /// The original's size, when the provider tells it; null otherwise.
    public var width: Int?
    /// See `width`.
    public var height: Int?
    /// A small variant URL as the provider gives it.
    public var thumbURL: String
    /// The largest variant URL this key may fetch; null for a video (`media: "video"`), whose
    /// only image is a still frame that must never pass for the photo.
    public var fullURL: String?
    /// Who took it.
    public var author: Author
    /// Likes or favourites, when the provider counts them.
    public var likes: Int?
    public var description: String?
    /// The photo's page at the provider, for attribution.
    public var pageURL: String?
    /// A BlurHash of the photo (docs/protocol.md, "Placeholders"): Unsplash's as sent, the
    /// daemon's own for other photos once a thumbnail of them was decoded; absent until then.
    public var blurHash: String?
    /// The photo's placeholder colour, `#rrggbb`: Unsplash's as sent, else the average of
    /// the first decoded thumbnail; absent until then.
    public var color: String?

    /// When the camera took it, ISO 8601 UTC (`Z`), where the provider says (Flickr
    /// `datetaken`); absent otherwise, never the upload time in its place.
    public var takenAt: String?
    /// When it was posted to the provider, ISO 8601 UTC (`Z`) (Flickr `dateupload`/`dates.posted`,
    /// Unsplash `created_at`); absent when unknown.
    public var uploadedAt: String?
    /// A paid placement (Unsplash's `sponsorship`): a client must label it as such. Absent on the
    /// wire otherwise.
    public var sponsored: Bool?
    /// The sponsor's name, where the provider gives it.
    public var sponsor: String?
    /// `video` for a video (never answered or saved as a photo); absent for a photo.
    public var media: Media?
    /// Keywords, on search results too wherever the provider's search answer carries them, so
    /// a client can filter a page without one `photo.get` per photo.
    public var tags: [String]?

    // Detail fields, filled by `photo.get` where the provider has them.
    /// View count.
    public var views: Int?
    /// Download count.
    public var downloads: Int?
    /// Camera settings.
    public var exif: EXIF?
    /// Where it was taken.
    public var location: Location?

    public init(id: String, provider: String, width: Int?, height: Int?, thumbURL: String, fullURL: String?,
                author: Author, likes: Int?, description: String?, pageURL: String?,
                uploadedAt: String? = nil, tags: [String]? = nil, views: Int? = nil, downloads: Int? = nil,
                exif: EXIF? = nil, location: Location? = nil) {
        self.id = id
        self.provider = provider
        self.width = width
        self.height = height
        self.thumbURL = thumbURL
        self.fullURL = fullURL
        self.author = author
        self.likes = likes
        self.description = description
        self.pageURL = pageURL
        self.uploadedAt = uploadedAt
        self.tags = tags
        self.views = views
        self.downloads = downloads
        self.exif = exif
        self.location = location
    }

    enum CodingKeys: String, CodingKey {
        case id, provider, width, height, thumbURL, fullURL, author, likes, description, pageURL, blurHash, color
        case takenAt, uploadedAt, sponsored, sponsor, media, tags, views, downloads, exif, location
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(provider, forKey: .provider)
        // The contract shows unknown values as null rather than leaving the key out.
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(thumbURL, forKey: .thumbURL)
        try c.encode(fullURL, forKey: .fullURL)
        try c.encode(author, forKey: .author)
        try c.encode(likes, forKey: .likes)
        try c.encode(description, forKey: .description)
        try c.encode(pageURL, forKey: .pageURL)
        // Placeholders are absent until known (an addition: older answers have neither key).
        try c.encodeIfPresent(blurHash, forKey: .blurHash)
        try c.encodeIfPresent(color, forKey: .color)
        try c.encodeIfPresent(takenAt, forKey: .takenAt)
        try c.encodeIfPresent(uploadedAt, forKey: .uploadedAt)
        if sponsored == true {
            try c.encode(true, forKey: .sponsored)
            try c.encodeIfPresent(sponsor, forKey: .sponsor)
        }
        try c.encodeIfPresent(media, forKey: .media)
        try c.encodeIfPresent(tags, forKey: .tags)
        try c.encodeIfPresent(views, forKey: .views)
        try c.encodeIfPresent(downloads, forKey: .downloads)
        try c.encodeIfPresent(exif, forKey: .exif)
        try c.encodeIfPresent(location, forKey: .location)
    }
}
