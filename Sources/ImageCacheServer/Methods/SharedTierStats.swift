import ImageCacheKit
import Synchronization
import ImageCacheProtocol

/// `stats.shared`: the memcached nodes' figures from the client and what the tier did for
/// this host's thumbnails from the pipeline. Read from atomics and a short lock, never
/// waiting (`stats` is answered inline). Absent while `[shared]` names no server.
enum SharedTierStats {
    static func register(_ stats: StatsRegistry, services: DaemonServices) {
        let store = services.shared
        let pipeline = services.pipeline
        stats.register("shared") { result in
            let nodes = store.statistics
            guard !nodes.isEmpty else {
                result.shared = nil
                return
            }
            let activity = pipeline.tierActivity
            result.shared = .init(
                nodes: nodes.map {
                    .init(server: $0.server, state: $0.state, hits: $0.hits, misses: $0.misses, errors: $0.errors,
                          ejections: $0.ejections, bytesSent: $0.bytesSent, bytesReceived: $0.bytesReceived)
                },
                thumbnailHits: pipeline.lookups.counts.shared,
                rejected: activity.rejected.load(ordering: .relaxed),
                waits: activity.waits.load(ordering: .relaxed),
                waitsExpired: activity.waitsExpired.load(ordering: .relaxed),
                writes: activity.writes.load(ordering: .relaxed),
                writesFailed: activity.writesFailed.load(ordering: .relaxed))
        }
    }
}
