import Foundation
import NIOConcurrencyHelpers

/// What the demo's image host served: requests, completed bodies and bodies abandoned by the
/// daemon (a recycled slot's transfer that stopped), per path, in arrival order. The gallery's
/// browser tests read it (the API server's `/_log`) to prove which thumbnails the page
/// fetched and which it cancelled.
public final class DemoImageLog: Sendable {
    /// The figures as served at `/_log`.
    public struct Snapshot: Codable, Sendable {
        /// Paths (without query) in the order their requests arrived.
        public var arrivals: [String] = []
        /// Bodies sent to their end, by path.
        public var completed: [String: Int] = [:]
        /// Bodies whose client went away first, by path.
        public var aborted: [String: Int] = [:]
        /// Body bytes written by the abandoned responses, all paths.
        public var abortedBytes = 0
    }

    private let state = NIOLockedValueBox(Snapshot())

    /// An empty log.
    public init() {}

    func requested(_ path: String) { state.withLockedValue { $0.arrivals.append(path) } }
    func completed(_ path: String) { state.withLockedValue { $0.completed[path, default: 0] += 1 } }
    func aborted(_ path: String, bytes: Int) {
        state.withLockedValue {
            $0.aborted[path, default: 0] += 1
            $0.abortedBytes += bytes
        }
    }

    /// The figures now.
    public var snapshot: Snapshot { state.withLockedValue { $0 } }
}
