import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a descriptor to its end on a thread of its own, then closes it: a child writing much
/// never blocks on a full pipe, no thread of the cooperative pool waits on a read, and the
/// end can be awaited with a bound.
package final class PipeDrain: Sendable {
    private let state = LockedState(State())

    private struct State {
        var bytes: [UInt8] = []
        var ended = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// Starts reading `fd`, which it owns from now on; `onChunk` sees each chunk as it arrives.
    package init(_ fd: Int32, onChunk: @escaping @Sendable ([UInt8]) -> Void = { _ in }) {
        Thread { [state] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                let chunk = Array(buffer[0..<count])
                state.withLock { $0.bytes += chunk }
                onChunk(chunk)
            }
            close(fd)
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.ended = true
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume() }
        }.start()
    }

    /// Everything read so far.
    package var bytes: [UInt8] { state.withLock { $0.bytes } }

    /// What was read, once the pipe has ended or `seconds` have passed, whichever is first.
    package func text(within seconds: Double) async -> String {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.end() }
            group.addTask { await sleep(boundedSeconds: seconds) }
            await group.next()
            group.cancelAll()
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Returns once the pipe has ended (or the waiting task is cancelled).
    package func end() async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if state.ended || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
