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
        /// The original image's upright size (what the fleet's shared tier records with it).
        var originalWidth: Int
        var originalHeight: Int
        /// Where the bytes came from: the network, or the fleet's shared tier.
        var source: ThumbnailSource
    }

    /// What the fetch knows of the body so far; its demands and outcome have their own
    /// primitives (`DemandGroup`, `SharedOutcome`).
    private struct State {
        var header: ImageHeader?
        /// The placeholder known when the header was (sent with it to later demands too).
        var placeholder: ImagePlaceholder?
        /// The first bytes of the body, kept until the header is read.
        var probeBuffer: [UInt8] = []
        var probing = true
        /// Why the transfer was stopped early (not an image, too many pixels), if it was.
        var earlyFailure: ImagingError?
        /// The transfer, once started (the probe cancels it when the body is not usable).
        var handle: TransferHandle?
        /// Whether the probe recorded the original's size in the dimensions store (then the
        /// local store records only what is new: the placeholder).
        var sizeRecorded = false
    }

    /// Header bytes kept at most while probing: a JPEG whose header is not complete within
    /// this many bytes gets its dimensions from the complete body instead.
    static let probeLimit = 512 << 10

    let key: FetchKey
    let plan: FetchPlan
    private let state = LockedState(State())
    /// The demands: each with its priority and its event handler (nil: it wants none).
    private let demands: DemandGroup<UInt64, TransferPriority, (@Sendable (ThumbnailEvent) -> Void)?>
    private let outcome = SharedOutcome<Stored, any Error>(cancellation: { Cancellation.request })

    init(plan: FetchPlan, priority: TransferPriority) {
        self.plan = plan
        key = plan.fetchKey
        demands = DemandGroup(priority: priority)
    }

    // MARK: Demands

    /// Adds a demand; raises the transfer's priority when this one is higher. Returns false
    /// when the fetch was already abandoned (its last demand left): the caller starts a new one.
    func add(_ id: UInt64, priority: TransferPriority, events: (@Sendable (ThumbnailEvent) -> Void)?) -> Bool {
        guard demands.join(id, priority: priority, member: events) else { return false }
        if let events, let known = state.withLock({ s in s.header.map { (header: $0, placeholder: s.placeholder) } }) {
            events(plan.dimensionsEvent(copyWidth: known.header.width, copyHeight: known.header.height, placeholder: known.placeholder))
        }
        return true
    }

    /// Removes a demand. The last one out abandons the fetch: its transfer is cancelled and
    /// `true` is returned so the pipeline forgets it.
    func remove(_ id: UInt64) -> Bool {
        demands.withdraw(id)
    }

    /// Demands waiting on this fetch now.
    var demandCount: Int { demands.count }

    /// Whether no demand wants the result any more.
    var isAbandoned: Bool { demands.isAbandoned }

    /// The priority the transfer should run at now.
    var priority: TransferPriority { demands.priority }

    /// Waits for the outcome on behalf of a demand; a demand whose task is cancelled stops
    /// waiting with `cancelled` (withdrawing it is the caller's part).
    func wait() async throws -> Stored {
        try await outcome.value()
    }

    // MARK: The transfer

    /// Records the transfer's handle; cancels it at once if every demand left meanwhile.
    func attach(_ handle: TransferHandle, startedAt priority: TransferPriority) {
        state.withLock { $0.handle = handle }
        demands.attach(.init(setPriority: { handle.setPriority($0) },
                             cancel: { handle.cancel(reason: "no demand left") }), startedAt: priority)
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
            // With the provider's own placeholder, when it sent one, so storing the thumbnail
            // has nothing left to record unless its pixels give a placeholder.
            dimensions.record(.init(width: header.width, height: header.height), placeholder: plan.placeholder(computed: nil),
                              photo: plan.photoID, url: plan.cleanURL)
            state.withLock { $0.sizeRecorded = true }
            let placeholder = plan.placeholder(computed: dimensions.rememberedPlaceholder(photo: plan.photoID, url: plan.cleanURL))
            state.withLock { $0.placeholder = placeholder }
            send(plan.dimensionsEvent(copyWidth: header.width, copyHeight: header.height, placeholder: placeholder))
        case .failed(_, let handle):
            handle?.cancel(reason: "not a usable image")
        }
    }

    /// Tells every demand that the fetch waits for another host of the fleet (which holds the
    /// shared tier's claim on this image): a progress of zero bytes, so a client sees the
    /// request is alive while no byte flows here.
    func announceWaiting() {
        send(.progress(received: 0, total: nil))
    }

    /// Whether the original's size this fetch learnt is already in the dimensions store (the
    /// probe read it from the header and recorded it).
    var sizeRecorded: Bool { state.withLock { $0.sizeRecorded } }

    /// Why the transfer was stopped before its end by the probe, if it was.
    var earlyFailure: ImagingError? { state.withLock { $0.earlyFailure } }

    private func send(_ event: ThumbnailEvent) {
        for handler in demands.members { handler?(event) }
    }

    // MARK: The end

    /// Delivers the outcome to every waiting demand (once; later calls are ignored). From
    /// here on the last demand out cancels nothing.
    func finish(_ outcome: Result<Stored, any Error>) {
        demands.end()
        self.outcome.settle(outcome)
    }
}
