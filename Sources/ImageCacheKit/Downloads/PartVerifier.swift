import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol

/// Verifies a download's `.part` while the engine writes it: a `StreamingVerifier` fed by
/// `pread` from the file, on threads of its own (`VerificationThreads`, never queued behind the
/// downloads' fsyncs), woken by the transfer's progress events. The curl thread only records how far the file has grown, so verification
/// never slows the transfers; a photo is verified within milliseconds of its last byte on any
/// link slower than the decoder, and a corrupt body is refused before the rest of it is
/// downloaded.
///
/// A resumed job's verifier starts with the bytes already on disk (`available`), so they are
/// verified again while the rest is requested. A body restarted from byte 0 (`restart()`)
/// starts a fresh verification.
///
/// Decode budget: nothing is held while the header is read (a few KiB, fed in small steps so
/// that the feed completing the header returns before the decoder allocates); from then on
/// each burst of decoding holds a `DecodeBudget` permit for the verifier's `memoryCost`, at
/// most `burst` bytes at a time, and releases it while the verifier waits for the network, so
/// that downloads never hold decode slots idle while visible thumbnails wait. (What the
/// decoder keeps allocated between bursts is then outside the budget; downloads are few —
/// bounded by the engine's connections — and a progressive JPEG's buffers are counted each
/// time it decodes.)
///
/// Writeback: after each burst the verifier, which has just read those bytes, starts their
/// writeback to the disk (`ic_start_writeback`, without waiting), so the `fsync` that follows
/// the last byte (before `download.finished`) has only the tail and the journal left to write
/// instead of the whole photo (docs/benchmarks.md, Downloads, has the figures).
final class PartVerifier: Sendable {
    private struct Progress: Sendable {
        /// Bumped by each restart from byte 0.
        var generation = 0
        /// Bytes of the body the engine has written.
        var available = 0
        /// The transfer is over and `available` is the body's final size.
        var ended = false
        /// The job no longer wants a verdict (failed or cancelled).
        var abandoned = false
        /// Bumped by every change, so a reader that found nothing new can wait for the next one.
        var version = 0
    }

    /// What one verification reads with and feeds: used by one burst at a time, in turn, by
    /// `run()` (never concurrently), so it needs no lock.
    private final class Reader: @unchecked Sendable {
        let fd: Int32
        var verifier: StreamingVerifier
        var position = 0
        /// Bytes whose writeback has been started (`startWriteback()`).
        private var writtenBack = 0
        private var buffer = [UInt8](repeating: 0, count: PartVerifier.readSize)

        init(fd: Int32, maxPixels: Int) {
            self.fd = fd
            verifier = StreamingVerifier(maxPixels: maxPixels)
        }

        deinit { close(fd) }

        func reset() {
            verifier.reset()
            position = 0
            writtenBack = 0
        }

        /// Starts writing the bytes read so far to the disk, not waiting for it. Only an
        /// optimisation of the final fsync (which still runs and reports any error), so a
        /// refusal here (a file system without it) changes nothing.
        func startWriteback() {
            guard position - writtenBack >= PartVerifier.writebackStep else { return }
            _ = ic_start_writeback(fd, Int64(writtenBack), Int64(position - writtenBack))
            writtenBack = position
        }

        /// Feeds the file from `position` to `limit`; stops early at a short read (the file
        /// was emptied by a restart meanwhile: the new generation says so).
        func feed(upTo limit: Int) throws {
            while position < limit {
                let want = min(buffer.count, limit - position)
                let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, want, off_t(position)) }
                if got < 0 {
                    if errno == EINTR { continue }
                    throw FileOps.failure("cannot read the partial download")
                }
                if got == 0 { return }
                try withRawBytes(buffer) { (raw) throws(ImagingError) in
                    try verifier.feed(UnsafeRawBufferPointer(rebasing: raw[..<got]))
                }
                position += got
            }
        }
    }

    /// Bytes read per `pread`.
    static let readSize = 256 << 10
    /// Bytes decoded under one permit before it is given back for others.
    static let burst = 2 << 20
    /// Bytes fed at a time until the decoder knows its memory cost.
    static let headerStep = 16 << 10
    /// Fewest verified bytes whose writeback is started at once.
    static let writebackStep = 256 << 10

    /// How far the body is, published by the transfer's callbacks and awaited by `run()`.
    private let progress: Observed<Progress>
    private let path: String
    private let opener: @Sendable () -> Int32
    private let maxPixels: Int
    private let decodes: DecodeBudget

    /// A verifier of the file at `path` (named in messages) whose first `available` bytes are
    /// already written, read through `open` (a descriptor or `-errno`: the job's folder opens
    /// it beneath the root, never through a symlink).
    init(path: String, open: @escaping @Sendable () -> Int32, available: Int, maxPixels: Int, decodes: DecodeBudget) {
        self.path = path
        self.opener = open
        self.maxPixels = maxPixels
        self.decodes = decodes
        progress = Observed(Progress(available: max(0, available)))
    }

    // MARK: From the transfer (any thread, quick)

    /// The engine has written `size` bytes of the body.
    func advance(to size: Int) {
        update { if !$0.ended { $0.available = max($0.available, size) } }
    }

    /// The file was emptied: the body starts again from byte 0.
    func restart() {
        update {
            $0.generation += 1
            $0.available = 0
        }
    }

    /// The transfer is over with `size` bytes in the file.
    func end(size: Int) {
        update {
            $0.available = size
            $0.ended = true
        }
    }

    /// Stops a verification whose verdict is no longer wanted.
    func abandon() {
        update { $0.abandoned = true }
    }

    private func update(_ change: (inout Progress) -> Void) {
        progress.update { state in
            change(&state)
            state.version &+= 1
        }
    }

    // MARK: The verification

    /// Runs until the whole body is verified (its header) or proven not to decode.
    /// - Throws: `decode_failed`/`too_large` as `StreamingVerifier`; `cancelled` once abandoned;
    ///   a storage error when the file cannot be read.
    func run() async throws -> ImageHeader {
        let fd = opener()
        guard fd >= 0 else {
            errno = -fd
            throw FileOps.failure("cannot open the partial download \(path)")
        }
        let reader = Reader(fd: fd, maxPixels: maxPixels)
        var generation = 0
        // The version at which the file had fewer bytes than reported (emptied for a restart
        // whose new head has not arrived yet): wait for news rather than read again.
        var stuck: Int?
        while true {
            let now = try await next(after: reader.position, generation: generation, stuck: stuck)
            if now.abandoned { throw Cancellation(.verification(abandoned: true)) }
            if now.generation != generation {
                generation = now.generation
                stuck = nil
                reader.reset()
                continue
            }
            if reader.position < now.available {
                let before = reader.position
                do {
                    try await feed(reader, upTo: now.available)
                } catch {
                    // Bytes of a restarted body read at old offsets prove nothing.
                    if progress.value.generation != generation { continue }
                    throw error
                }
                if reader.position == before {
                    if now.ended {
                        throw DownloadError.internalFault("the partial download \(path) ends at \(before) bytes, before its \(now.available)")
                    }
                    stuck = now.version
                } else {
                    stuck = nil
                }
                continue
            }
            if now.ended {
                var header: ImageHeader?
                let box = LockedState<ImageHeader?>(nil)
                // GIF, WebP and AVIF are decoded here, whole: under a permit like any decode.
                let cost = reader.verifier.decodesAtFinish ? reader.verifier.memoryCost : nil
                var permit: DecodeBudget.Permit?
                do {
                    if let cost { permit = try await decodes.acquire(DecodeCost(bytes: cost, work: 0)) }
                } catch where !(error is CancellationError) {
                    throw error
                } catch {
                    throw Cancellation(.verification(abandoned: false))
                }
                defer { if let permit { decodes.release(permit) } }
                try await Self.blocking { () throws in
                    let verdict = try reader.verifier.finish()
                    box.withLock { $0 = verdict }
                }
                header = box.withLock { $0 }
                guard let header else { throw DownloadError.internalFault("verification ended without a verdict") }
                return header
            }
        }
    }

    /// One burst: under a permit once the decoder's memory cost is known.
    private func feed(_ reader: Reader, upTo available: Int) async throws {
        guard let cost = reader.verifier.memoryCost else {
            let limit = min(available, reader.position + Self.headerStep)
            try await Self.blocking { () throws in try reader.feed(upTo: limit) }
            return
        }
        let limit = min(available, reader.position + Self.burst)
        let permit: DecodeBudget.Permit
        do {
            permit = try await decodes.acquire(DecodeCost(bytes: cost, work: 0))
        } catch where !(error is CancellationError) {
            throw error
        } catch {
            throw Cancellation(.verification(abandoned: false))
        }
        defer { decodes.release(permit) }
        try await Self.blocking { () throws in
            try reader.feed(upTo: limit)
            reader.startWriteback()
        }
    }

    /// Waits until there is something to do past `position` in `generation` (after a read
    /// that found nothing new at version `stuck`: until anything changes).
    /// - Throws: `cancelled` when the verifying task is cancelled while it waits.
    private func next(after position: Int, generation: Int, stuck: Int?) async throws -> Progress {
        @Sendable func ready(_ state: Progress) -> Bool {
            if state.abandoned || state.generation != generation { return true }
            if let stuck { return state.version != stuck }
            return state.available > position || state.ended
        }
        while true {
            let now = progress.value
            if ready(now) { return now }
            do {
                try await progress.wait(until: ready)
            } catch {
                throw Cancellation(.verification(abandoned: false))
            }
        }
    }

    /// Runs `body` on the verification threads (never behind the downloads' fsyncs).
    private static func blocking(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await VerificationThreads.shared.run(body)
    }
}
