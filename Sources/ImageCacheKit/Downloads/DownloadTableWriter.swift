import ImageCacheSupport
import Logging

/// Writes the job table off the manager's actor, coalescing: one write at a time, and the
/// changes made while it runs go into the next one (the newest table only). A job's state
/// reaches the disk a few milliseconds after it changed (each write is temporary file + fsync
/// + rename, so never torn); fsyncs on the actor would make every `download` wait for the disk
/// (see docs/benchmarks.md, Downloads).
///
/// `flush()` waits for the write that holds every change handed over before it: each change
/// gets the next number, and the numbers written are `Observed`, so any number of waiters are
/// woken by the write itself.
final class DownloadTableWriter: Sendable {
    private struct State {
        var writing = false
        /// The newest table not written yet.
        var pending: [DownloadRecord]?
        /// The number of the newest change handed over.
        var requested: UInt64 = 0
    }

    private let store: DownloadJobStore
    private let logger: Logger
    private let state = LockedState(State())
    /// The number of the newest change on disk (or whose write failed, and was logged).
    private let written = Observed<UInt64>(0)

    /// A writer into `store`, logging a failed write to `logger`.
    init(store: DownloadJobStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Hands over the whole table as it is now; it is written soon, off the caller's thread.
    func save(_ records: [DownloadRecord]) {
        let start = state.withLock { s -> Bool in
            s.requested &+= 1
            s.pending = records
            guard !s.writing else { return false }
            s.writing = true
            return true
        }
        if start { Task { await self.drain() } }
    }

    /// Writes the pending tables, newest first taken, until none is left.
    private func drain() async {
        while true {
            let next = state.withLock { s -> (records: [DownloadRecord], number: UInt64)? in
                guard let records = s.pending else {
                    s.writing = false
                    return nil
                }
                s.pending = nil
                return (records, s.requested)
            }
            guard let next else { return }
            let store = store
            do {
                try await BlockingIO.run { try store.save(next.records) }
            } catch {
                logger.error("cannot save the download job table", metadata: ["reason": "\(error)"])
            }
            written.publish(next.number)
        }
    }

    /// Returns once every table handed over so far is written (tests, a clean stop, and
    /// `download` before it answers). The caller's cancellation does not cut the wait short:
    /// an answer that promises a durable job must not come before the table holds it.
    func flush() async {
        let target = state.withLock { $0.requested }
        let written = written
        await Task { try? await written.wait { $0 >= target } }.value
    }
}
