import Foundation
import ImageCacheProtocol

/// One image being fetched and processed for every demand that wants it.
///
/// It holds the set of demands (each with its priority and its event handler). Its transfer
/// runs at the highest priority among them, so a prefetch joined by a visible slot jumps the
/// queue; when the last demand is withdrawn before the end, the transfer is cancelled at once
/// (bytes stop flowing) and the processing never starts. Events from the engine's thread are
/// fanned out to the demands present at that moment; a demand that joins late gets the
/// dimensions at once if the header has already been read.
///
/// The image header is probed from the first chunks: `dimensions` goes out before the body
/// is complete, and a body that is not an image, or whose header declares more pixels than
/// `max_image_pixels`, is stopped right there instead of being downloaded to the end.
final class ThumbnailFetch: Sendable {
    /// What every demand receives when the fetch succeeds.
    struct Stored: Sendable {
        var path: String
        var width: Int
        var height: Int
        var mime: String
        var bytes: Data
    }

    private struct Demand {
        var priority: TransferPriority
        var events: (@Sendable (ThumbnailEvent) -> Void)?
    }

    private struct State {
        var demands: [UInt64: Demand] = [:]
        var priority: TransferPriority
        var handle: TransferHandle?
        var outcome: Result<Stored, any Error>?
        var waiters: [UInt64: CheckedContinuation<Stored, any Error>] = [:]
        var header: ImageHeader?
        /// The first bytes of the body, kept until the header is read.
        var probeBuffer: [UInt8] = []
        var probing = true
        /// Why the transfer was stopped early (not an image, too many pixels), if it was.
        var earlyFailure: ImagingError?
        var abandoned = false
    }

    /// Header bytes kept at most while probing: a JPEG whose header is not complete within
    /// this many bytes gets its dimensions from the complete body instead.
    static let probeLimit = 512 << 10

    let key: FetchKey
    let plan: FetchPlan
    private let state: LockedState<State>

    init(plan: FetchPlan, priority: TransferPriority) {
        self.plan = plan
        key = plan.fetchKey
        state = LockedState(State(priority: priority))
    }

    // MARK: Demands

    /// Adds a demand; raises the transfer's priority when this one is higher. Returns false
    /// when the fetch was already abandoned (its last demand left): the caller starts a new one.
    func add(_ id: UInt64, priority: TransferPriority, events: (@Sendable (ThumbnailEvent) -> Void)?) -> Bool {
        let (added, raise, header) = state.withLock { s -> (Bool, TransferHandle?, ImageHeader?) in
            guard !s.abandoned else { return (false, nil, nil) }
            s.demands[id] = Demand(priority: priority, events: events)
            var raise: TransferHandle?
            if priority > s.priority {
                s.priority = priority
                raise = s.handle
            }
            return (true, raise, s.header)
        }
        raise?.setPriority(priority)
        if added, let header, let events { events(.dimensions(width: header.width, height: header.height)) }
        return added
    }

    /// Removes a demand. The last one out abandons the fetch: its transfer is cancelled and
    /// `true` is returned so the pipeline forgets it.
    func remove(_ id: UInt64) -> Bool {
        let (abandon, handle, lower, waiter) = state.withLock { s -> (Bool, TransferHandle?, TransferPriority?, CheckedContinuation<Stored, any Error>?) in
            let waiter = s.waiters.removeValue(forKey: id)
            guard s.demands.removeValue(forKey: id) != nil else { return (false, nil, nil, waiter) }
            if s.demands.isEmpty {
                if case .some = s.outcome { return (false, nil, nil, waiter) }
                s.abandoned = true
                return (true, s.handle, nil, waiter)
            }
            let highest = s.demands.values.map(\.priority).max() ?? s.priority
            guard highest != s.priority else { return (false, nil, nil, waiter) }
            s.priority = highest
            return (false, s.handle, highest, waiter)
        }
        waiter?.resume(throwing: Cancellation.request)
        if abandon {
            handle?.cancel(reason: "no demand left")
        } else if let lower {
            handle?.setPriority(lower)
        }
        return abandon
    }

    /// Demands waiting on this fetch now.
    var demandCount: Int { state.withLock { $0.demands.count } }

    /// Whether no demand wants the result any more.
    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// The priority the transfer should run at now.
    var priority: TransferPriority { state.withLock { $0.priority } }

    /// Waits for the outcome on behalf of demand `id`.
    func wait(_ id: UInt64) async throws -> Stored {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Stored, any Error>) in
            let ready: Result<Stored, any Error>? = state.withLock { s in
                if let outcome = s.outcome { return outcome }
                guard s.demands[id] != nil else {
                    return .failure(Cancellation.request)
                }
                s.waiters[id] = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    // MARK: The transfer

    /// Records the transfer's handle; cancels it at once if every demand left meanwhile.
    func attach(_ handle: TransferHandle) {
        let abandoned = state.withLock { s -> Bool in
            s.handle = handle
            return s.abandoned
        }
        if abandoned { handle.cancel(reason: "no demand left") }
    }

    /// Handles one engine event (on the engine's thread): progress goes to every demand, the
    /// first chunks are probed for the header.
    func handle(_ event: TransferEvent, dimensions: ImageDimensionsStore, maxPixels: Int) {
        switch event {
        case .progress(let received, let expected):
            send(.progress(received: received, total: expected))
        case .chunk(let offset, let bytes):
            probe(offset: offset, bytes: bytes, dimensions: dimensions, maxPixels: maxPixels)
        case .retrying, .response:
            break
        }
    }

    private func probe(offset: Int, bytes: [UInt8], dimensions: ImageDimensionsStore, maxPixels: Int) {
        enum Step { case none, found(ImageHeader), failed(ImagingError, TransferHandle?) }
        let step = state.withLock { s -> Step in
            guard s.probing else { return .none }
            if offset != s.probeBuffer.count {
                // A restarted body (a retry from zero): start the header over.
                guard offset == 0 else { s.probing = false; return .none }
                s.probeBuffer.removeAll(keepingCapacity: true)
            }
            s.probeBuffer.append(contentsOf: bytes)
            do throws(ImagingError) {
                switch try ImageHeaderProbe.probe(s.probeBuffer) {
                case .needMore:
                    if s.probeBuffer.count > Self.probeLimit {
                        s.probing = false
                        s.probeBuffer = []
                    }
                    return .none
                case .header(let header):
                    s.probing = false
                    s.probeBuffer = []
                    do throws(ImagingError) {
                        try header.checkPixelLimit(maxPixels)
                    } catch {
                        s.earlyFailure = error
                        return .failed(error, s.handle)
                    }
                    s.header = header
                    return .found(header)
                }
            } catch {
                s.probing = false
                s.probeBuffer = []
                s.earlyFailure = error
                return .failed(error, s.handle)
            }
        }
        switch step {
        case .none:
            break
        case .found(let header):
            dimensions.record(.init(width: header.width, height: header.height), photo: plan.photoID, url: plan.cleanURL)
            send(.dimensions(width: header.width, height: header.height))
        case .failed(_, let handle):
            handle?.cancel(reason: "not a usable image")
        }
    }

    /// Why the transfer was stopped before its end by the probe, if it was.
    var earlyFailure: ImagingError? { state.withLock { $0.earlyFailure } }

    private func send(_ event: ThumbnailEvent) {
        let handlers = state.withLock { s in s.demands.values.compactMap(\.events) }
        for handler in handlers { handler(event) }
    }

    // MARK: The end

    /// Delivers the outcome to every waiting demand (once; later calls are ignored).
    func finish(_ outcome: Result<Stored, any Error>) {
        let waiters = state.withLock { s -> [CheckedContinuation<Stored, any Error>] in
            if case .some = s.outcome { return [] }
            s.outcome = outcome
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }
}
