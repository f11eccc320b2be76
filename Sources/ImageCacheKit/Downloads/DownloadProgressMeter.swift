import DequeModule
import ImageCacheProtocol

/// Turns the engine's progress events of one job (up to ten a second, on the curl thread)
/// into `download.progress` notifications: at most one per `interval`, plus the last one,
/// with `bytesPerSecond` averaged over the last `window` so one burst does not make the
/// figure jump.
///
/// Called from the curl thread and read by `download.status`: state behind a lock.
final class DownloadProgressMeter: Sendable {
    private struct Sample {
        var time: ContinuousClock.Instant
        var received: Int
    }

    private struct State {
        var samples = Deque<Sample>()
        var lastEmitted: ContinuousClock.Instant?
        var received: Int
        var total: Int?
        var ended = false
    }

    let job: String
    let interval: Duration
    let window: Duration
    private let state: LockedState<State>

    init(job: String, received: Int, total: Int?, interval: Duration = .milliseconds(250), window: Duration = .seconds(3)) {
        self.job = job
        self.interval = interval
        self.window = window
        state = LockedState(State(received: received, total: total))
    }

    /// Records the bytes so far; returns the notification to send now, if one is due.
    func record(received: Int, total: Int?, now: ContinuousClock.Instant = .now) -> DownloadProgress? {
        state.withLock { s -> DownloadProgress? in
            guard !s.ended else { return nil }
            s.received = received
            s.total = total ?? s.total
            s.samples.append(Sample(time: now, received: received))
            while let first = s.samples.first, now - first.time > window, s.samples.count > 2 { s.samples.removeFirst() }
            let complete = s.total.map { received >= $0 } ?? false
            if let last = s.lastEmitted, now - last < interval, !complete { return nil }
            s.lastEmitted = now
            return DownloadProgress(job: job, received: received, total: s.total, bytesPerSecond: Self.rate(s.samples))
        }
    }

    /// No notification after this (the job finished, failed or was cancelled).
    func end() {
        state.withLock { $0.ended = true }
    }

    /// Bytes and total as last reported.
    var snapshot: (received: Int, total: Int?) {
        state.withLock { ($0.received, $0.total) }
    }

    private static func rate(_ samples: Deque<Sample>) -> Double {
        guard let first = samples.first, let last = samples.last, last.time > first.time else { return 0 }
        let elapsed = last.time - first.time
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(last.received - first.received) / seconds
    }
}
