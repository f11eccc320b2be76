import Foundation
import ImageCacheSupport

/// The daemon's stderr as lines, with waits for a line that contains a text: how a caller
/// waits for a logged event instead of sleeping.
final class CapturedLog: Sendable {
    private let state = LockedState(State())

    private struct State {
        var lines: [String] = []
        /// Bytes after the last newline, until their line ends.
        var pending: [UInt8] = []
        var waiters: [UInt64: (matches: @Sendable (String) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// Every complete line so far.
    var lines: [String] { state.withLock { $0.lines } }

    /// Adds a chunk as read from the pipe; each line it completes wakes the waits it matches.
    func append(_ chunk: [UInt8]) {
        let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.pending += chunk
            var woken: [CheckedContinuation<Bool, Never>] = []
            while let newline = state.pending.firstIndex(of: 0x0A) {
                let line = String(decoding: state.pending[..<newline], as: UTF8.self)
                state.pending.removeSubrange(...newline)
                state.lines.append(line)
                for (id, waiter) in state.waiters where waiter.matches(line) {
                    woken.append(waiter.continuation)
                    state.waiters[id] = nil
                }
            }
            return woken
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// True once a line contains `text` (one already logged counts), false when the waiting
    /// task is cancelled first (the caller bounds the wait).
    func wait(for text: String) async -> Bool {
        await wait { $0.contains(text) }
    }

    /// True once a line satisfies `matches` (one already logged counts), false when the
    /// waiting task is cancelled first (the caller bounds the wait).
    func wait(until matches: @escaping @Sendable (String) -> Bool) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                // Registered under the same lock as lines are added, so a line arriving now is not missed.
                let answer = state.withLock { state -> Bool? in
                    if state.lines.contains(where: matches) { return true }
                    if Task.isCancelled { return false }
                    state.waiters[id] = (matches, continuation)
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: false)
        }
    }
}
