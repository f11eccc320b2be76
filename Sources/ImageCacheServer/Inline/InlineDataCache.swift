import Foundation
import ImageCacheKit

/// The base64 of hot inline thumbnails, as the server sends it: made once per memory entry
/// and kept here, so a hot thumbnail shown with `inline: true` is not encoded on every answer.
///
/// The memory tier holds a thumbnail's bytes only; this is the server's own derived copy,
/// keyed by the memory entry it was made from (`ThumbnailDelivery.memoryEntry`, a number no
/// other entry gets), so it can never be served for other bytes. It is kept in a sealed memory
/// file followed by the end of the answer line it was first made for, so that an answer is its
/// head from a buffer and then that file by `sendfile`, in two writes and without copying the
/// data. The end is the one the answer's own writer produced (`ThumbnailShowResult`), and an
/// answer uses the file's end only when its own end is the same bytes: an answer whose end
/// differs (its members reordered, say) sends the file's data alone and then its own end.
final class InlineDataCache: Sendable {
    /// One thumbnail's base64, ready for an answer.
    enum Encoded: Sendable {
        /// In a sealed file, followed by `lineEnd` (the end of the answer line it was made for).
        case file(SealedMemoryFile, lineEnd: [UInt8])
        /// As text, when no sealed file could be made (the descriptor budget is used up).
        case text(String)

        /// Bytes it holds (its charge against the cache's limit).
        var count: Int {
            switch self {
            case .file(let file, _): return file.count
            case .text(let text): return text.utf8.count
            }
        }
    }

    private let entries: MemoryCache<UInt64, Encoded>
    private let makeFile: @Sendable ([UInt8]) -> SealedMemoryFile?

    /// A cache holding at most `costLimit` bytes of base64 (and line ends); `makeFile` makes
    /// the sealed files (tests pass one that fails, to see the text fallback).
    init(costLimit: Int, makeFile: @escaping @Sendable ([UInt8]) -> SealedMemoryFile? = { SealedMemoryFile.make($0) }) {
        entries = MemoryCache(costLimit: costLimit)
        self.makeFile = makeFile
    }

    /// The limit for a memory tier of `memoryLimit` bytes: base64 is 4/3 of what it encodes,
    /// and only the thumbnails shown inline while hot are kept, so half the tier's bound holds
    /// every hot one in practice and adds a known term to the daemon's memory (docs/operating.md, "The memory formula").
    static func costLimit(memoryLimit: Int) -> Int { memoryLimit / 2 }

    /// `delivery`'s data as base64 for an answer whose line ends with `lineEnd` after the
    /// data: the kept copy of its memory entry, else encoded now (and kept when the data came
    /// from memory). nil when the delivery carries no data.
    func encoded(_ delivery: ThumbnailDelivery, lineEnd: @autoclosure () -> [UInt8]) -> Encoded? {
        guard let data = delivery.data else { return nil }
        guard let entry = delivery.memoryEntry else { return .text(data.base64EncodedString()) }
        if let kept = entries.value(forKey: entry) { return kept }
        let text = data.base64EncodedString()
        let end = lineEnd()
        let encoded = makeFile(Array(text.utf8) + end).map { Encoded.file($0, lineEnd: end) } ?? .text(text)
        entries.insert(encoded, forKey: entry, cost: encoded.count)
        return encoded
    }

    /// Lets go of every kept copy (`cache.evict`, `cache.clear`): the files go with the
    /// thumbnails they were made from, once the answers still being written are sent.
    func removeAll() {
        entries.removeAll()
    }

    /// Entries and bytes held now.
    var statistics: CacheTierStatistics { entries.statistics }
}
