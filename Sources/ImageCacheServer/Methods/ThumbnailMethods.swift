import Foundation
import ImageCacheKit
import Logging
import NIOCore

/// `thumbnail.show` and `thumbnail.recycle` (docs/protocol.md, `thumbnail.show`) on the
/// socket, over the daemon's `ImagePipeline`.
///
/// What this layer adds to the pipeline is what belongs to a grid client's session:
/// - slots: a session's slots (per view) each hold at most one pending `thumbnail.show`;
///   showing a slot again or recycling it answers the earlier request 1007 `recycled`, cancels
///   its task (withdrawing its demand: the transfer stops unless another demand wants it) and
///   guarantees nothing more is sent for it (`SlotTable`);
/// - arrival order: a slot's show and recycle take effect in the order they arrived on the
///   connection (`RPCRouter.register(_:arrival:_:)`), so "show then recycle" never becomes
///   "recycle then show";
/// - flings: while a session flings, a new request that must go to the network is held for up
///   to `fling_dwell` (`FlingHold`); cache hits and calm sessions never wait;
/// - prefetches (`PrefetchMethods`, a family of its own) keep their table beside the slots, in
///   the same `sessions`.
public final class ThumbnailMethods: MethodFamily {
    let services: DaemonServices
    /// Every open session's slots and prefetches.
    let sessions = SessionSlots()

    /// The family over `services.pipeline`.
    public init(services: DaemonServices) {
        self.services = services
    }

    /// Adds the two methods. Every `thumbnail.*` answer is claimed and sent by the slot
    /// table (`Reply.sent`): a slot's answers must be decided under its lock (no late
    /// results), in arrival order.
    public func register(in router: inout RPCRouter) {
        router.register(Methods.ThumbnailShow.self, .ordered(arrival: { [self] params, context -> Arrival<ShowJob> in
            let slots = sessions.tables(for: context.session).slots
            let ticket = slots.show(SlotKey(view: params.view, slot: params.slot), context: context)
            // A memory hit is answered right here, on the event loop, with no task: the slot
            // was just taken in arrival order, so nothing can come between show and answer.
            var journey = services.pipeline.journey(to: params.image, size: params.size ?? services.configuration.thumbnailSize,
                                                    priority: .visible, wantsBytes: params.inline)
            if let hit = journey.memoryHit() {
                let shown = Self.result(of: hit, params: params, inlineData: services.inlineData)
                _ = slots.finish(ticket, success: { id in Self.answer(id: id, shown) })
                return .sent
            }
            // A miss the indexes tell at once, with no fling to hold it, joins its fetch here:
            // the fetch (a shared-tier hit's round trip) starts while the task is scheduled.
            // The task's `deliver` then waits for it, and withdraws it whatever happens.
            if !ticket.arrivedDuringFling {
                _ = journey.joinNow(events: Self.events(params: params, slots: slots, ticket: ticket))
            }
            return .run(ShowJob(params: params, ticket: ticket, slots: slots, journey: journey))
        }, run: { [self] job, context in
            await show(job, context: context)
        }))
        // Recycling never waits and must work for a client at its pending cap: inline, on the
        // event loop in arrival order; its answer is claimed and sent by the slot table, under
        // the lock that orders it after everything sent for the slot before.
        router.register(Methods.ThumbnailRecycle.self, .inline { [self] params, context in
            let slots = sessions.tables(for: context.session).slots
            slots.recycle(SlotKey(view: params.view, slot: params.slot), context: context)
            return .sent
        })
    }

    /// A show past its arrival step: the params, the slot's ticket, the session's slots, and
    /// the thumbnail's journey as far as the event loop walked it.
    struct ShowJob: Sendable {
        var params: ThumbnailShowParams
        var ticket: SlotTicket
        var slots: SlotTable
        var journey: ThumbnailJourney
    }

    /// Walks the rest of the thumbnail's journey in the request's own task (a recycle of the
    /// slot cancels it through the session), holding a request that must be fetched while its
    /// session flings, then answers through the slot table (which sends only while the slot is
    /// still this request's, and counts what it sends): whatever happens, the answer is the
    /// slot table's to send.
    private func show(_ job: ShowJob, context: RequestContext) async -> Reply<ThumbnailShowResult> {
        let params = job.params
        let dwell = services.configuration.current.network.flingDwell
        let inlineData = services.inlineData
        let slots = job.slots
        let ticket = job.ticket
        let logger = context.logger
        let events = Self.events(params: params, slots: slots, ticket: ticket)
        var journey = job.journey
        let outcome: Result<ThumbnailDelivery, any Error>
        do {
            // A hit answers at once, whatever the session does; only a fetch is held.
            outcome = .success(try await journey.deliver(events: events, beforeFetch: {
                try await FlingHold.wait(table: slots, dwell: dwell, ticket: ticket, logger: logger)
            }))
        } catch {
            outcome = .failure(error)
        }
        let answer: Answer
        switch outcome {
        case .success(let delivery):
            let shown = Self.result(of: delivery, params: params, inlineData: inlineData)
            answer = .success { id in Self.answer(id: id, shown) }
        case .failure(let error):
            answer = .failure(error, context: context)
        }
        // When the slot moved on, its recycle answered this request (or `cancel`/the close
        // took it): nothing is left to send either way.
        _ = slots.finish(ticket, answer)
        return .sent
    }

    /// A show's result, and the sealed file that holds its inline data, when there is one
    /// (`result.data` is then nil: the answer sends the file in its place), followed by the
    /// end of the answer line it was made for (`InlineDataCache`).
    struct Shown: Sendable {
        var result: ThumbnailShowResult
        var dataFile: SealedMemoryFile? = nil
        /// The line's end the file holds after the data.
        var fileLineEnd: [UInt8] = []
    }

    /// The success line of a show, its result written straight into the line's buffer (up to
    /// the inline data, when a sealed file sends that). The file's own line end is sent only
    /// when it is, byte for byte, what this answer's writer puts after the data; otherwise the
    /// file's data goes alone and the writer's end follows it.
    static func answer(id: RequestID, _ shown: Shown) -> OutboundMessage {
        let result = shown.result
        guard let file = shown.dataFile else {
            return MessageEncoder.success(id: id, resultBound: result.jsonBound) { result.writeJSON(to: &$0) }
        }
        let lineEnd = lineEnd(of: result)
        if lineEnd.readableBytesView.elementsEqual(shown.fileLineEnd) {
            return MessageEncoder.success(id: id, resultBound: result.jsonBound, rest: file) {
                result.writeJSONUpToData(to: &$0)
            }
        }
        return MessageEncoder.success(id: id, resultBound: result.jsonBound, rest: file,
                                      restCount: max(0, file.count - shown.fileLineEnd.count), tail: lineEnd) {
            result.writeJSONUpToData(to: &$0)
        }
    }

    /// What follows the inline data in `result`'s answer line, as the writers put it.
    static func lineEnd(of result: ThumbnailShowResult) -> ByteBuffer {
        MessageEncoder.lineEnd(afterResult: { result.writeJSONAfterData(to: &$0) }, bound: result.jsonBound)
    }

    static func result(of delivery: ThumbnailDelivery, params: ThumbnailShowParams, inlineData: InlineDataCache) -> Shown {
        var result = ThumbnailShowResult(slot: params.slot, view: params.view, photo: params.image.photoID, path: delivery.path,
                                         width: delivery.width, height: delivery.height, bytes: delivery.bytes, mime: delivery.mime,
                                         source: delivery.source, data: nil)
        guard params.inline else { return Shown(result: result) }
        switch inlineData.encoded(delivery, lineEnd: Array(lineEnd(of: result).readableBytesView)) {
        case .file(let file, let fileLineEnd)?:
            return Shown(result: result, dataFile: file, fileLineEnd: fileLineEnd)
        case .text(let text)?:
            result.data = text
        case nil:
            break
        }
        return Shown(result: result)
    }

    /// Where a show's fetch events go: its slot's notifications, sent only while the slot is
    /// still this request's.
    static func events(params: ThumbnailShowParams, slots: SlotTable, ticket: SlotTicket) -> @Sendable (ThumbnailEvent) -> Void {
        { event in slots.notify(notification(for: event, params: params), for: ticket) }
    }

    /// `thumbnail.progress` or `thumbnail.dimensions` for a pipeline event.
    static func notification(for event: ThumbnailEvent, params: ThumbnailShowParams) -> OutboundMessage {
        let photo = params.image.photoID
        switch event {
        case .progress(let received, let total):
            return MessageEncoder.notification(ThumbnailProgress(slot: params.slot, view: params.view, photo: photo,
                                                                 received: received, total: total))
        case .dimensions(let width, let height, let blurHash, let color):
            return MessageEncoder.notification(ThumbnailDimensions(slot: params.slot, view: params.view, photo: photo,
                                                                   width: width, height: height, blurHash: blurHash, color: color))
        }
    }
}
