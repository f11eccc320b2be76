import Logging

/// The wait a new network request of a flinging session makes before it starts (docs/protocol.md, "thumbnail.show":
/// held for up to `fling_dwell`, started at once when the fling ends).
///
/// It sleeps until the earlier of the dwell's end and the fling's end, and looks again when
/// it wakes, because further recycles can prolong the fling. Cancelling the waiting task (the
/// slot was recycled) ends it with `CancellationError`, so the request never reaches the
/// network. A session that is not flinging passes straight through.
enum FlingHold {
    /// Waits while `table`'s session flings, at most `dwell`, when the request arrived during
    /// a fling (a request that arrived while the session was calm never waits).
    /// - Returns: whether the request was held at all (for the log).
    /// - Throws: `CancellationError` when the task is cancelled while held.
    @discardableResult
    static func wait(table: SlotTable, dwell: Duration, ticket: SlotTicket, logger: Logger) async throws -> Bool {
        guard ticket.arrivedDuringFling else { return false }
        let deadline = ContinuousClock.now.advanced(by: dwell)
        logger.debug("request held while its session flings", metadata: ["slot": "\(ticket.key)"])
        do {
            while let end = table.flingEnd(), ContinuousClock.now < deadline {
                try await Task.sleep(until: min(end, deadline), clock: .continuous)
            }
            try Task.checkCancellation()
        } catch {
            logger.debug("held request withdrawn before reaching the network", metadata: ["slot": "\(ticket.key)"])
            throw error
        }
        logger.debug("held request starts", metadata: ["slot": "\(ticket.key)"])
        return true
    }
}
