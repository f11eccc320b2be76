import Foundation
import ImageCacheKit
import NIOCore
import ProviderSimulator

/// What a chaos host does wrong while a fault window is open, to every other request (so the
/// daemon sees failures and successes interleaved, as from a flaky upstream).
enum HostFault: Sendable, Equatable, CustomStringConvertible {
    /// Answer normally.
    case none
    /// Wait this long before answering.
    case slow(milliseconds: Int)
    /// Answer this status (with `Retry-After` when given) and a short body.
    case status(Int, retryAfter: String?)
    /// Declare the whole length, send half the body, close (FIN).
    case truncate
    /// Send half the body, then reset the connection (RST).
    case reset
    /// Send the head and a few body bytes, then nothing, keeping the connection open.
    case stall

    var description: String {
        switch self {
        case .none: "none"
        case .slow(let ms): "slow \(ms) ms"
        case .status(let code, let retry): "status \(code)" + (retry.map { " Retry-After \($0)" } ?? "")
        case .truncate: "truncated bodies"
        case .reset: "connection resets"
        case .stall: "stalls"
        }
    }
}

/// A loopback HTTP server that answers through `inner` (the provider API simulator, or the
/// simulator's image route) and applies the current `HostFault` to every other request.
/// `Range: bytes=N-` is honoured on 200 answers that carry an ETag, so a download resumed
/// after a fault gets a 206, as from a real image CDN.
final class ChaosHost: Sendable {
    let server: LoopbackHTTPServer
    private let state: LockedState<(fault: HostFault, count: Int, faulted: Int)>

    init(_ inner: @escaping @Sendable (SimulatedRequest) -> SimulatedResponse) async throws {
        let state = LockedState<(fault: HostFault, count: Int, faulted: Int)>((.none, 0, 0))
        self.state = state
        server = try await LoopbackHTTPServer(streaming: { request, writer in
            let fault = state.withLock { s -> HostFault in
                s.count += 1
                guard s.fault != .none, s.count % 2 == 0 else { return .none }
                s.faulted += 1
                return s.fault
            }
            ChaosHost.answer(request, inner: inner, fault: fault, writer: writer)
        })
    }

    var baseURL: String { server.baseURL }

    /// Opens (or, with `.none`, closes) a fault window.
    func set(_ fault: HostFault) { state.withLock { $0.fault = fault } }

    /// Requests seen, and those a fault was applied to.
    var counts: (requests: Int, faulted: Int) { state.withLock { ($0.count, $0.faulted) } }

    func shutdown() async { await server.shutdown() }

    private static func answer(_ request: SimulatedRequest, inner: @Sendable (SimulatedRequest) -> SimulatedResponse,
                               fault: HostFault, writer: ResponseWriter) {
        let response = ranged(inner(request), request: request)
        let half = response.body.count / 2
        let head = response.headers.filter { $0.0.lowercased() != "content-length" }
            + [("Content-Length", String(response.body.count))]
        switch fault {
        case .none:
            writer.respond(response)
        case .slow(let ms):
            writer.after(.milliseconds(Int64(ms))) { writer.respond(response) }
        case .status(let code, let retryAfter):
            var headers = [("Content-Type", "text/plain")]
            if let retryAfter { headers.append(("Retry-After", retryAfter)) }
            writer.respond(SimulatedResponse(status: code, headers: headers, body: Array("chaos \(code)\n".utf8)))
        case .truncate:
            writer.writeHead(status: response.status, headers: head)
            writer.write(Array(response.body.prefix(half))).whenComplete { _ in writer.closeAbruptly() }
        case .reset:
            writer.writeHead(status: response.status, headers: head)
            writer.write(Array(response.body.prefix(half))).whenComplete { _ in writer.reset() }
        case .stall:
            writer.writeHead(status: response.status, headers: head)
            writer.write(Array(response.body.prefix(min(64, half))))
        }
    }

    /// The 206 part of `response` that `Range: bytes=N-` asks for (with `If-Range` matching its
    /// ETag or absent), 416 past the end; the whole response otherwise.
    static func ranged(_ response: SimulatedResponse, request: SimulatedRequest) -> SimulatedResponse {
        let etag = response.headers.first { $0.0 == "ETag" }?.1
        guard response.status == 200, etag != nil, let range = request.header("Range"), range.hasPrefix("bytes="),
              request.header("If-Range") == nil || request.header("If-Range") == etag,
              let start = Int(range.dropFirst(6).prefix { $0 != "-" }) else { return response }
        let body = response.body
        guard start < body.count else {
            return SimulatedResponse(status: 416, headers: [("Content-Range", "bytes */\(body.count)")])
        }
        return SimulatedResponse(status: 206, headers: response.headers + [("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")],
                                 body: Array(body[start...]))
    }
}
