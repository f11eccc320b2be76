import Logging
import NIOCore
import NIOEmbedded
@testable import ImageCacheProtocol
@testable import ImageCacheServer

/// `request-line`: the scanner (`RPCRouter.scan`, the fast path of `thumbnail.show`) against
/// the general path (`IncomingMessageParser`, then `StrictParamsDecoder`), differentially.
///
/// Whatever the scanner takes, the general path must read as the same request (id, method,
/// params, or the same validation error); the general path must never trap on any line. The same property as
/// RequestScannerTests' "fuzzed lines", over libFuzzer's mutations of raw bytes.
enum RequestLineTarget {
    static let target = FuzzTarget(name: "request-line", summary: "RequestScanner vs IncomingMessageParser + StrictParamsDecoder", run: run)

    /// Thrown by the route's arrival step to hand back the params it was given.
    struct Captured: Error { var params: ThumbnailShowParams }

    /// A router with the scannable route (the real params type and its real `scan`) and one
    /// that is not, as the daemon's has.
    static let router: RPCRouter = {
        var router = RPCRouter()
        router.register(Methods.ThumbnailShow.self, .ordered(arrival: { params, _ -> Arrival<Int> in
            throw Captured(params: params)
        }, run: { _, _ in .sent }))
        router.register(Methods.Hello.self, .inline { _, _ in .result(HelloResult(version: "0", providers: [])) })
        return router
    }()

    static let session = Session(id: 1, peer: nil, channel: EmbeddedChannel(), logger: Logger(label: "fuzz"))

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let general = IncomingMessageParser.parse(ByteBuffer(bytes: bytes))
        guard let scanned = router.scan(bytes) else { return }
        let context = RequestContext(session: session, requestID: scanned.id, method: scanned.method)
        let params: Result<ThumbnailShowParams, RPCError>
        do {
            _ = try scanned.arrive(context)
            FuzzCheck.fail("the arrival step returned instead of being given the params")
        } catch let captured as Captured {
            params = .success(captured.params)
        } catch let error as RPCError {
            params = .failure(error)  // validation, which runs before the arrival step
        } catch {
            FuzzCheck.fail("the arrival step threw \(error)")
        }
        guard case .success(.request(let id, let method, let raw))? = general else {
            FuzzCheck.fail("the scanner took a line the general path answers \(String(describing: general)): \(params)")
        }
        FuzzCheck.require(id == scanned.id && method == scanned.method,
                          "scanned id \(scanned.id) method \(scanned.method); general id \(id) method \(method)")
        let decoded = Result { () throws(RPCError) in try StrictParamsDecoder.decodeAndValidate(ThumbnailShowParams.self, from: raw) }
        FuzzCheck.require(decoded == params, "scanned params \(params); general \(decoded)")
    }
}
