import ImageCacheKit

/// `layout` (docs/protocol.md, `layout`) on the socket: the `Masonry` of the photos named, each sized by the
/// best dimensions the daemon already has. It never fetches: a photo no thumbnail fetch has
/// decoded yet is placed by the provider's size, or as a square when there is none, and the
/// client re-asks after `thumbnail.dimensions`.
///
/// Per photo, `PhotoDimensions.resolve` of the remembered photo's `width`/`height` and the
/// size a thumbnail fetch decoded (the `ImageDimensionsStore`, persisted across restarts):
/// `provider` (its own size, agreeing with the decoded copy's aspect when there is one),
/// `decoded` (the copy's aspect, where the provider says nothing or disagrees), `unknown`. A photo id the daemon knows neither way — never returned by a
/// search, nor decoded — answers 1006 `not_found` naming the first such id
/// (`data.field: "photos[i]"`): placing it as a square would hide a client's mistake in a
/// grid that looks right.
///
/// Each frame carries the photo's placeholder `color` when known: its provider's (Unsplash),
/// else the one remembered from its first decoded thumbnail (docs/protocol.md, "Placeholders").
public struct LayoutMethods: MethodFamily {
    let services: DaemonServices

    /// The family over the daemon's dimensions store and photo registry.
    public init(services: DaemonServices) {
        self.services = services
    }

    /// Adds `layout`. It runs as a task (the registry is an actor and a memory miss reads the
    /// disk), not inline.
    public func register(in router: inout RPCRouter) {
        let services = self.services
        router.register(Methods.Layout.self, .task { params, _ in
            try await Self.layout(params, dimensions: services.dimensions, registry: services.registry)
        })
    }

    /// The frames for `params`, validated already.
    /// - Throws: `not_found` for a photo id with neither decoded nor remembered dimensions.
    static func layout(_ params: LayoutParams, dimensions: ImageDimensionsStore,
                       registry: PhotoRegistry) async throws(ServerError) -> LayoutResult {
        // Sizes not in memory come from the dimensions database: read off the cooperative pool.
        let photos = params.photos
        let (decoded, placeholders) = await BlockingIO.read {
            (dimensions.decoded(photos: photos), dimensions.placeholders(photos: photos))
        }
        var known: [String: (Masonry.Size?, DimensionSource)] = [:]
        var colors: [String: String] = [:]
        for (index, id) in params.photos.enumerated() where known[id] == nil {
            // A remembered photo's own colour wins over a computed one.
            let remembered = await registry.photo(id: id)?.photo
            if let color = remembered?.color ?? placeholders[id]?.color { colors[id] = color }
            guard remembered != nil || decoded[id] != nil else {
                throw ServerError(.unknownLayoutPhoto(id: id, index: index))
            }
            let size = PhotoDimensions.resolve(providerWidth: remembered?.width, providerHeight: remembered?.height,
                                               decoded: decoded[id])
            known[id] = size.map { (Masonry.Size(width: Double($0.width), height: Double($0.height)), $0.source) }
                ?? (nil, .unknown)
        }
        var masonry = Masonry(columns: params.columns, width: params.width, spacing: params.spacing,
                              columnHeights: params.columnHeights)
        let frames = params.photos.map { id -> LayoutFrame in
            let (size, source) = known[id] ?? (nil, .unknown)
            let frame = masonry.place(size)
            return LayoutFrame(photo: id, column: frame.column, x: frame.x, y: frame.y, width: frame.width,
                               height: frame.height, dims: size == nil ? .unknown : source, color: colors[id])
        }
        return LayoutResult(frames: frames, columnHeights: masonry.columnHeights)
    }
}
