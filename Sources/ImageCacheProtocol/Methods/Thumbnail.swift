extension Methods {
    /// `thumbnail.show`: a grid slot became visible; answers when its thumbnail is on disk.
    public enum ThumbnailShow: RPCMethod {
        public typealias Params = ThumbnailShowParams
        public typealias Result = ThumbnailShowResult
        public static let name = MethodName.thumbnailShow
    }

    /// `thumbnail.recycle`: a slot scrolled away; its pending request answers 1007 and its
    /// transfer stops unless someone else still wants the image.
    public enum ThumbnailRecycle: RPCMethod {
        public typealias Params = ThumbnailRecycleParams
        public typealias Result = CancelledResult
        public static let name = MethodName.thumbnailRecycle
    }
}

/// Slots are numbered per view, so a client with two grids (say a main grid and a sidebar)
/// keeps their slot numbers apart.
public enum SlotView {
    /// The view a slot belongs to when the client names none.
    public static let main = "main"
}

/// Params of `thumbnail.show`.
public struct ThumbnailShowParams: RPCParams, Hashable {
    /// The grid slot, 0 or more; showing a slot that is still loading recycles it.
    public var slot: Int
    /// The photo (by id) or the image URL to show.
    public var image: ImageReference
    /// The pixel width the client will draw; nil means the daemon's `thumbnail_size`.
    public var size: Int?
    /// When true the answer carries the file's bytes as base64 in `data`.
    public var inline: Bool
    /// The view the slot belongs to.
    public var view: String

    public init(slot: Int, image: ImageReference, size: Int? = nil, inline: Bool = false, view: String = SlotView.main) {
        self.slot = slot
        self.image = image
        self.size = size
        self.inline = inline
        self.view = view
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case slot, photo, url, size, inline, view }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        slot = try c.decode(Int.self, forKey: .slot)
        image = try ImageReference.decode(from: c, photoKey: .photo, urlKey: .url)
        size = try c.decodeIfPresent(Int.self, forKey: .size)
        inline = try c.decodeIfPresent(Bool.self, forKey: .inline) ?? false
        view = try c.decodeIfPresent(String.self, forKey: .view) ?? SlotView.main
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(slot, forKey: .slot)
        try image.encode(to: &c, photoKey: .photo, urlKey: .url, nullOther: false)
        try c.encodeIfPresent(size, forKey: .size)
        try c.encode(inline, forKey: .inline)
        try c.encode(view, forKey: .view)
    }

    public func validate() throws(RPCError) {
        if slot < 0 { throw .invalidParam("slot", "'slot' must be 0 or more") }
        try FieldCheck.reference(image)
        try FieldCheck.size(size)
        if view.isEmpty { throw .invalidParam("view", "'view' must not be empty") }
    }
}

/// Where a delivered thumbnail was found.
public enum ThumbnailSource: String, ParamEnum {
    /// `shared`: from the fleet's memcached tier (`[shared]`), verified, then stored locally.
    case memory, disk, shared, network
}

/// The answer to `thumbnail.show`: a complete, immutable file inside `cache_dir`, valid for
/// at least `path_grace` after delivery.
public struct ThumbnailShowResult: Codable, Sendable, Hashable {
    /// The slot the request named.
    public var slot: Int
    /// The view of the slot (an addition to the contract's list, so a client with several
    /// views can route the answer without remembering it).
    public var view: String
    /// The photo id, or null for a `url` request.
    public var photo: String?
    /// Absolute path of the file.
    public var path: String
    /// Of the delivered image, read by decoding it (upright, after EXIF orientation).
    public var width: Int
    /// See `width`.
    public var height: Int
    /// The file's size in bytes.
    public var bytes: Int
    /// `image/jpeg` or `image/png`.
    public var mime: String
    /// Which tier delivered it: a client can tell a cache hit from a download.
    public var source: ThumbnailSource
    /// The file's bytes, base64, only when the request had `inline: true`; the key is left out otherwise.
    public var data: String?

    public init(slot: Int, view: String = SlotView.main, photo: String?, path: String, width: Int, height: Int,
                bytes: Int, mime: String, source: ThumbnailSource, data: String? = nil) {
        self.slot = slot
        self.view = view
        self.photo = photo
        self.path = path
        self.width = width
        self.height = height
        self.bytes = bytes
        self.mime = mime
        self.source = source
        self.data = data
    }

    enum CodingKeys: String, CodingKey { case slot, view, photo, path, width, height, bytes, mime, source, data }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        slot = try c.decode(Int.self, forKey: .slot)
        view = try c.decodeIfPresent(String.self, forKey: .view) ?? SlotView.main
        photo = try c.decodeIfPresent(String.self, forKey: .photo)
        path = try c.decode(String.self, forKey: .path)
        width = try c.decode(Int.self, forKey: .width)
        height = try c.decode(Int.self, forKey: .height)
        bytes = try c.decode(Int.self, forKey: .bytes)
        mime = try c.decode(String.self, forKey: .mime)
        source = try c.decode(ThumbnailSource.self, forKey: .source)
        data = try c.decodeIfPresent(String.self, forKey: .data)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(slot, forKey: .slot)
        try c.encode(view, forKey: .view)
        try c.encode(photo, forKey: .photo)
        try c.encode(path, forKey: .path)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(bytes, forKey: .bytes)
        try c.encode(mime, forKey: .mime)
        try c.encode(source, forKey: .source)
        try c.encodeIfPresent(data, forKey: .data)
    }
}

/// Params of `thumbnail.recycle`.
public struct ThumbnailRecycleParams: RPCParams, Hashable {
    /// The slot that scrolled away.
    public var slot: Int
    /// The view of the slot.
    public var view: String

    public init(slot: Int, view: String = SlotView.main) {
        self.slot = slot
        self.view = view
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case slot, view }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        slot = try c.decode(Int.self, forKey: .slot)
        view = try c.decodeIfPresent(String.self, forKey: .view) ?? SlotView.main
    }

    public func validate() throws(RPCError) {
        if slot < 0 { throw .invalidParam("slot", "'slot' must be 0 or more") }
        if view.isEmpty { throw .invalidParam("view", "'view' must not be empty") }
    }
}

/// `thumbnail.progress`: bytes received for a slot's image, at most every 100 ms plus a final one.
public struct ThumbnailProgress: RPCNotificationPayload, Hashable {
    public static let name = NotificationName.thumbnailProgress
    /// The slot whose image loads.
    public var slot: Int
    /// The view of the slot.
    public var view: String
    /// The photo id, or null for a `url` request.
    public var photo: String?
    /// Body bytes received so far.
    public var received: Int
    /// The body's length when the server said it; null otherwise.
    public var total: Int?

    public init(slot: Int, view: String = SlotView.main, photo: String?, received: Int, total: Int?) {
        self.slot = slot
        self.view = view
        self.photo = photo
        self.received = received
        self.total = total
    }

    enum CodingKeys: String, CodingKey { case slot, view, photo, received, total }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        slot = try c.decode(Int.self, forKey: .slot)
        view = try c.decodeIfPresent(String.self, forKey: .view) ?? SlotView.main
        photo = try c.decodeIfPresent(String.self, forKey: .photo)
        received = try c.decode(Int.self, forKey: .received)
        total = try c.decodeIfPresent(Int.self, forKey: .total)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(slot, forKey: .slot)
        try c.encode(view, forKey: .view)
        try c.encode(photo, forKey: .photo)
        try c.encode(received, forKey: .received)
        try c.encode(total, forKey: .total)
    }
}

/// `thumbnail.dimensions`: the image's size, read from its header before the body is
/// complete, so a masonry grid can be laid out while thumbnails still load.
public struct ThumbnailDimensions: RPCNotificationPayload, Hashable {
    public static let name = NotificationName.thumbnailDimensions
    /// The slot whose image loads.
    public var slot: Int
    /// The view of the slot.
    public var view: String
    /// The photo id, or null for a `url` request.
    public var photo: String?
    /// Of the image as stored upstream (upright, after EXIF orientation when the header says it).
    public var width: Int
    /// See `width`.
    public var height: Int
    /// The image's BlurHash when known by then (docs/protocol.md, "Placeholders"): the
    /// provider's, or the daemon's from an earlier decode; absent otherwise.
    public var blurHash: String?
    /// The image's placeholder colour, `#rrggbb`, when known by then; absent otherwise.
    public var color: String?

    public init(slot: Int, view: String = SlotView.main, photo: String?, width: Int, height: Int,
                blurHash: String? = nil, color: String? = nil) {
        self.slot = slot
        self.view = view
        self.photo = photo
        self.width = width
        self.height = height
        self.blurHash = blurHash
        self.color = color
    }

    enum CodingKeys: String, CodingKey { case slot, view, photo, width, height, blurHash, color }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        slot = try c.decode(Int.self, forKey: .slot)
        view = try c.decodeIfPresent(String.self, forKey: .view) ?? SlotView.main
        photo = try c.decodeIfPresent(String.self, forKey: .photo)
        width = try c.decode(Int.self, forKey: .width)
        height = try c.decode(Int.self, forKey: .height)
        blurHash = try c.decodeIfPresent(String.self, forKey: .blurHash)
        color = try c.decodeIfPresent(String.self, forKey: .color)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(slot, forKey: .slot)
        try c.encode(view, forKey: .view)
        try c.encode(photo, forKey: .photo)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        // Additions: absent (not null) while unknown, so older clients see the same object.
        try c.encodeIfPresent(blurHash, forKey: .blurHash)
        try c.encodeIfPresent(color, forKey: .color)
    }
}
