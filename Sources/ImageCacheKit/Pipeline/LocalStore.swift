import Foundation
import ImageCacheProtocol
import Logging

/// Where a fetched thumbnail, from the network or from the fleet's shared tier, becomes a local
/// entry: its file in the disk cache under the plan's keys (with a width note when it is not
/// `size` wide), its path handed out for `path_grace`, and the original's size and placeholder
/// in the dimensions store, each recorded once per thumbnail.
extension ImagePipeline {
    /// Writes a network thumbnail to the disk cache (and memory), records what the dimensions
    /// store does not have yet, and hands the path out. `placeholder` is the one computed from
    /// the decoded pixels (nil when none was: the provider sent it, or an earlier decode of the
    /// image did); the provider's own values win. The size is recorded unless the fetch's probe
    /// already did. On the work queue.
    /// - Throws: `cacheWriteFailed` when the disk tier could not take it.
    static func storeLocally(_ image: [UInt8], width: Int, height: Int, mime: String, original: (width: Int, height: Int),
                             placeholder: ImagePlaceholder?, source: ThumbnailSource, fetch: ThumbnailFetch,
                             cache: ImageCache, dimensions: ImageDimensionsStore, logger: Logger) throws -> ThumbnailFetch.Stored {
        let plan = fetch.plan
        record(original, computed: placeholder, sizeKnown: fetch.sizeRecorded, plan: plan, dimensions: dimensions)
        let bytes = Data(image)
        let key = CacheKey.thumbnail(url: plan.url, width: width)
        let stored = cache.put(key, bytes: bytes, info: CacheEntryInfo(contentType: mime, width: width, height: height))
        if let note = widthNote(width, plan: plan) { cache.put(note.key, bytes: note.bytes, info: note.info) }
        // The path goes straight to the waiting clients: hand it out, so it stays
        // readable for `path_grace` whatever eviction or clearing comes next.
        cache.handOutPath(key)
        guard let path = stored.path else {
            let reason = stored.diskError.map { "\($0)" } ?? "no path"
            logger.error("a thumbnail could not be written to the disk cache", metadata: ["reason": "\(reason)"])
            throw PipelineError.cacheWriteFailed(stored.diskError)
        }
        return ThumbnailFetch.Stored(path: path, width: width, height: height, mime: mime, bytes: bytes,
                                     originalWidth: original.width, originalHeight: original.height, source: source)
    }

    /// A verified shared-tier value as a local file, answered before its bookkeeping: the
    /// content file is written (so the path is real and complete), the original's size goes
    /// to the dimensions store (memory only, never waiting for a disk, so a client told the
    /// dimensions finds them in `layout`), and the index row, memory copy and width note are
    /// left to `ImageCache.publishLater`, which the caller starts once the answer is out.
    /// Nothing decoded it here, so no placeholder is computed; `checksum` is the image's
    /// SHA-256 the value's verification computed, the entry's checksum. On the work queue.
    /// - Throws: `cacheWriteFailed` when the disk did not take the file.
    static func placeShared(_ value: SharedThumbnailValue, checksum: [UInt8], plan: FetchPlan, cache: ImageCache,
                            dimensions: ImageDimensionsStore, logger: Logger) throws -> (ThumbnailFetch.Stored, ImageCache.Placement) {
        let bytes = Data(value.image)
        let key = CacheKey.thumbnail(url: plan.url, width: value.width)
        let placement: ImageCache.Placement
        do {
            placement = try cache.place(key, bytes: bytes, checksum: CacheDigest(bytes: checksum),
                                        info: CacheEntryInfo(contentType: value.format.mimeType, width: value.width, height: value.height))
        } catch {
            logger.error("a thumbnail could not be written to the disk cache", metadata: ["reason": "\(error)"])
            throw PipelineError.cacheWriteFailed(error)
        }
        record((value.originalWidth, value.originalHeight), computed: nil, sizeKnown: false, plan: plan, dimensions: dimensions)
        let stored = ThumbnailFetch.Stored(path: placement.path, width: value.width, height: value.height, mime: value.format.mimeType,
                                           bytes: bytes, originalWidth: value.originalWidth, originalHeight: value.originalHeight,
                                           source: .shared)
        return (stored, placement)
    }

    /// The width note a thumbnail of `width` needs under the plan's keys: one when it is not
    /// `size` wide (a narrower original delivered as it is).
    static func widthNote(_ width: Int, plan: FetchPlan) -> ImageCache.Note? {
        guard width != plan.size else { return nil }
        return ImageCache.Note(key: plan.widthNoteKey, bytes: Data(String(width).utf8), info: CacheEntryInfo(contentType: "text/plain"))
    }

    /// Records in the dimensions store only what it lacks: the original's size unless
    /// `sizeKnown` (the probe recorded it), and the placeholder when one was computed.
    private static func record(_ original: (width: Int, height: Int), computed: ImagePlaceholder?, sizeKnown: Bool,
                               plan: FetchPlan, dimensions: ImageDimensionsStore) {
        guard !sizeKnown || computed != nil else { return }
        dimensions.record(.init(width: original.width, height: original.height), placeholder: plan.placeholder(computed: computed),
                          photo: plan.photoID, url: plan.cleanURL)
    }
}
