import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One direction of one proxied TCP connection, shaped like a real link: every chunk is
/// delivered `delay` after it was read (half the round-trip), and bytes leave no faster than
/// `bytesPerSecond` (the link's bandwidth). A reader thread timestamps what arrives; a writer
/// thread waits out each chunk's due time and paces the writes, so the delay is a pipeline
/// (many chunks in flight, as on a long link), not a stop-and-wait.
///
/// The kernel here has no netem/tc, hence this. Confinement: `queue` and `ended` are guarded by
/// `condition`; the descriptors are only read by one thread and written by the other.
final class ShapingRelay: @unchecked Sendable {
    private struct Chunk {
        var due: ContinuousClock.Instant
        var bytes: [UInt8]
    }

    private let from: Int32
    private let to: Int32
    private let delay: Duration
    private let bytesPerSecond: Double
    /// No byte goes out before this (a new connection's handshake round-trip).
    private let notBefore: ContinuousClock.Instant
    private let condition = NSCondition()
    private var queue: [Chunk] = []
    private var head = 0
    private var ended = false
    /// Bytes read but not yet written: the reader waits past `maxQueued`, so the upstream feels
    /// back-pressure as from a real link's window, instead of the proxy buffering whole bodies.
    private var queuedBytes = 0
    private let maxQueued = 256 << 10
    private let finished: @Sendable () -> Void

    init(from: Int32, to: Int32, delay: Duration, bytesPerSecond: Double, notBefore: ContinuousClock.Instant,
         finished: @escaping @Sendable () -> Void) {
        self.from = from
        self.to = to
        self.delay = delay
        self.bytesPerSecond = bytesPerSecond
        self.notBefore = notBefore
        self.finished = finished
    }

    func start() {
        Thread { [self] in readLoop() }.start()
        Thread { [self] in writeLoop() }.start()
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            condition.lock()
            if n > 0 {
                queue.append(Chunk(due: .now + delay, bytes: Array(buffer[0..<n])))
                queuedBytes += n
                condition.broadcast()
                while queuedBytes > maxQueued && !ended { condition.wait() }
            } else {
                ended = true
            }
            condition.broadcast()
            condition.unlock()
            if n <= 0 { return }
        }
    }

    private func writeLoop() {
        var nextSend = notBefore
        let slice = 16 << 10
        while true {
            condition.lock()
            while head == queue.count && !ended { condition.wait() }
            if head == queue.count {
                condition.unlock()
                break
            }
            let chunk = queue[head]
            head += 1
            if head > 1024 {
                queue.removeFirst(head)
                head = 0
            }
            condition.unlock()
            ShapingRelay.sleep(until: chunk.due)
            var offset = 0
            var failed = false
            while offset < chunk.bytes.count {
                let count = min(slice, chunk.bytes.count - offset)
                ShapingRelay.sleep(until: nextSend)
                let start = max(nextSend, .now)
                let written = chunk.bytes.withUnsafeBytes { write(to, $0.baseAddress! + offset, count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    failed = true
                    break
                }
                offset += written
                nextSend = start + .nanoseconds(Int64(Double(written) / bytesPerSecond * 1e9))
            }
            condition.lock()
            queuedBytes -= chunk.bytes.count
            condition.broadcast()
            condition.unlock()
            if failed { break }
        }
        condition.lock()
        ended = true  // frees a reader waiting for room after a failed write
        condition.broadcast()
        condition.unlock()
        shutdown(to, Int32(SHUT_WR))
        finished()
    }

    private static func sleep(until instant: ContinuousClock.Instant) {
        let wait = instant - .now
        guard wait > .zero else { return }
        let (seconds, attoseconds) = wait.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
