import NIOConcurrencyHelpers

/// The files the gallery may serve: exactly the paths the daemon delivered in answers to
/// `thumbnail.show` that passed through this bridge, with the MIME type it reported.
///
/// A path in a browser's request is only a key into this table, never opened as it is: a
/// page that asks for `/etc/passwd` or any cache file it was not handed gets a 404. The table
/// is bounded (oldest out first), so a long session cannot grow the bridge's memory.
public final class DeliveredPaths: Sendable {
    private struct State {
        var mimeByPath: [String: String] = [:]
        var order: [String] = []
        var start = 0
    }
    private let state = NIOLockedValueBox(State())
    /// The most paths remembered.
    public let capacity: Int

    /// An empty table holding at most `capacity` paths.
    public init(capacity: Int = 20_000) { self.capacity = max(1, capacity) }

    /// Records a path the daemon delivered (absolute paths only).
    public func remember(_ path: String, mime: String) {
        guard path.hasPrefix("/") else { return }
        state.withLockedValue { s in
            if s.mimeByPath.updateValue(mime, forKey: path) == nil { s.order.append(path) }
            while s.mimeByPath.count > capacity, s.start < s.order.count {
                s.mimeByPath[s.order[s.start]] = nil
                s.start += 1
            }
            if s.start > capacity {   // compact the queue now and then
                s.order.removeFirst(s.start)
                s.start = 0
            }
        }
    }

    /// The MIME type of a delivered path, nil when the daemon never delivered it here.
    public func mime(of path: String) -> String? {
        state.withLockedValue { $0.mimeByPath[path] }
    }

    /// How many paths are remembered.
    public var count: Int { state.withLockedValue { $0.mimeByPath.count } }
}
