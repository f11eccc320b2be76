import Foundation
import ImageCacheClient
import ImageCacheProtocol
import LineFraming
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOWebSocket

/// One browser tab's session: its WebSocket on one side, its own connection to the daemon's
/// Unix socket on the other, and JSON-RPC lines relayed both ways unchanged (one text frame
/// per line; requests, answers and notifications alike).
///
/// The relay reads just enough to learn which files the tab may then fetch: the `id` of each
/// `thumbnail.show` it sends, and the `path` and `mime` of the daemon's answer to that id go
/// into `DeliveredPaths`. When either side closes, so does the other, and the daemon ends the
/// session (its slots and searches) as for any client that goes away.
enum DaemonRelay {
    /// The largest frame or line relayed (inline thumbnails are the largest answers).
    static let maxFrameBytes = 16 * 1024 * 1024

    /// What the bridge sends the tab, as a JSON-RPC notification, when the daemon cannot be
    /// reached, before closing: the page shows `message`.
    static let unavailableMethod = "gallery.daemonUnavailable"

    /// Starts relays with the bridge's settings.
    struct Factory: Sendable {
        let socketPath: String
        let delivered: DeliveredPaths
        let group: any EventLoopGroup

        /// Relays one tab until either side closes.
        func run(_ webSocket: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) async {
            let daemon: NIOAsyncChannel<ByteBuffer, ByteBuffer>
            do {
                daemon = try await ClientBootstrap(group: group)
                    .connect(unixDomainSocketPath: socketPath) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLineBytes: maxFrameBytes, overlong: .fail)))
                            return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                        }
                    }
            } catch {
                try? await webSocket.executeThenClose { _, outbound in
                    let text = "{\"jsonrpc\":\"2.0\",\"method\":\"\(unavailableMethod)\",\"params\":{\"message\":"
                        + DaemonRelay.jsonString("no daemon answers at \(socketPath) (\(error)); start imagecached and reload") + "}}"
                    try await outbound.write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text)))
                    try await outbound.write(DaemonRelay.closeFrame(.unexpectedServerError))
                }
                return
            }
            let shows = PendingShows()
            try? await webSocket.executeThenClose { tabIn, tabOut in
                try await daemon.executeThenClose { daemonIn, daemonOut in
                    try await withThrowingTaskGroup(of: Void.self) { tasks in
                        tasks.addTask {   // tab → daemon
                            for try await frame in tabIn {
                                switch frame.opcode {
                                case .text:
                                    var data = frame.unmaskedData
                                    // A line must stay one line: a raw newline inside would be two messages.
                                    guard !data.readableBytesView.contains(UInt8(ascii: "\n")) else {
                                        try await tabOut.write(DaemonRelay.closeFrame(.dataInconsistentWithMessage))
                                        return
                                    }
                                    shows.noteRequest(data.readableBytesView)
                                    data.writeInteger(UInt8(ascii: "\n"))
                                    try await daemonOut.write(data)
                                case .ping:
                                    try await tabOut.write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
                                case .connectionClose:
                                    try await tabOut.write(DaemonRelay.closeFrame(.normalClosure))
                                    return
                                default:
                                    continue
                                }
                            }
                        }
                        tasks.addTask {   // daemon → tab
                            for try await line in daemonIn {
                                shows.noteAnswer(line.readableBytesView, delivered: delivered)
                                try await tabOut.write(WebSocketFrame(fin: true, opcode: .text, data: line))
                            }
                            try await tabOut.write(DaemonRelay.closeFrame(.goingAway))
                        }
                        _ = try await tasks.next()
                        tasks.cancelAll()
                    }
                }
            }
        }
    }

    static func closeFrame(_ code: WebSocketErrorCode) -> WebSocketFrame {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: code)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }

    static func jsonString(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// The ids of a tab's `thumbnail.show` requests not yet answered, so that only their answers'
/// paths become servable (a path inside any other message — a download's, a param echoed in
/// an error — never does).
final class PendingShows: Sendable {
    private let ids = NIOLockedValueBox<Set<RequestID>>([])
    /// At most this many remembered (a tab that never reads answers cannot grow it).
    static let capacity = 4096

    private struct Request: Decodable {
        var id: RequestID?
        var method: String?
    }

    private struct Answer: Decodable {
        struct Delivered: Decodable {
            var path: String?
            var mime: String?
        }
        var id: RequestID?
        var result: Delivered?
    }

    /// Looks at a line the tab sends.
    func noteRequest(_ bytes: ByteBufferView) {
        // Cheap test first: most lines are not shows.
        guard bytes.firstRange(of: Array("thumbnail.show".utf8)) != nil,
              let request = try? JSONDecoder().decode(Request.self, from: Data(bytes)),
              request.method == "thumbnail.show", let id = request.id else { return }
        ids.withLockedValue { set in
            if set.count >= Self.capacity { set.removeAll() }
            set.insert(id)
        }
    }

    /// Looks at a line the daemon sends; an answer to a pending show with a path makes it servable.
    func noteAnswer(_ bytes: ByteBufferView, delivered: DeliveredPaths) {
        guard !ids.withLockedValue({ $0.isEmpty }),
              let answer = try? JSONDecoder().decode(Answer.self, from: Data(bytes)), let id = answer.id else { return }
        guard ids.withLockedValue({ $0.remove(id) }) != nil else { return }
        if let path = answer.result?.path, let mime = answer.result?.mime {
            delivered.remember(path, mime: mime)
        }
    }
}
