import Foundation
import ImageCacheClient
import ImageCacheKit

/// Every request the chaos soak's clients made and how it ended, shared by the clients, the
/// fault schedule (which says when the daemon is planned to be away and when a fault is open)
/// and the sampler (which drains the per-interval figures into the CSV).
final class ChaosLedger: Sendable {
    struct State {
        /// "method outcome" → count, outcome being `ok`, an error kind, or `refused: …`.
        var outcomes: [String: Int] = [:]
        /// Answers no documented error kind explains, first ones kept verbatim.
        var unexplained: [String] = []
        var unexplainedCount = 0
        var hung: [String] = []
        /// Memory-hit latencies in µs, at rest and while a fault window is open.
        var restHits: [Double] = []
        var faultHits: [Double] = []
        /// Since the last sample.
        var interval = Interval()
        /// True from just before a planned kill until the daemon answers again.
        var daemonAway = false
        var faultOpen = false
        var downloads: [(job: String, url: String)] = []
    }

    struct Interval {
        var requests = 0
        var ok = 0
        var refused = 0
        var unexplained = 0
        var hung = 0
        var hits: [Double] = []
    }

    let state = LockedState(State())

    func setDaemonAway(_ away: Bool) { state.withLock { $0.daemonAway = away } }
    func setFaultOpen(_ open: Bool) { state.withLock { $0.faultOpen = open } }
    var daemonAway: Bool { state.withLock { $0.daemonAway } }

    /// Takes the figures since the last call.
    func drainInterval() -> Interval {
        state.withLock { s in defer { s.interval = Interval() }; return s.interval }
    }

    func record(_ method: String, outcome: String, refused: Bool) {
        state.withLock {
            $0.outcomes["\(method) \(outcome)", default: 0] += 1
            $0.interval.requests += 1
            if refused { $0.interval.refused += 1 } else { $0.interval.ok += 1 }
        }
    }

    func unexplained(_ method: String, _ detail: String) {
        state.withLock {
            $0.outcomes["\(method) UNEXPLAINED", default: 0] += 1
            $0.interval.requests += 1
            $0.interval.unexplained += 1
            $0.unexplainedCount += 1
            if $0.unexplained.count < 40 { $0.unexplained.append("\(method): \(detail)") }
        }
    }

    func hung(_ method: String, seconds: Double) {
        state.withLock {
            $0.outcomes["\(method) HUNG", default: 0] += 1
            $0.interval.requests += 1
            $0.interval.hung += 1
            if $0.hung.count < 40 { $0.hung.append("\(method) unanswered after \(Int(seconds)) s") }
        }
    }

    func memoryHit(microseconds: Double) {
        state.withLock {
            if $0.faultOpen { $0.faultHits.append(microseconds) } else { $0.restHits.append(microseconds) }
            $0.interval.hits.append(microseconds)
        }
    }

    func downloadStarted(job: String, url: String) { state.withLock { $0.downloads.append((job, url)) } }

    /// The value at quantile `q` (0…1) of `values`, nil when empty.
    static func quantile(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
    }
}
