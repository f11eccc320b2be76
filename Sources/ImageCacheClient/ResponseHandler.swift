import Foundation
import NIOCore

/// The channel's last inbound handler: reads each line as a JSON-RPC message and routes it,
/// an answer to its call, a notification to the subscribers.
///
/// Lives on the channel's event loop; all shared state is in the `ResponseRouter`.
final class ResponseHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let router: ResponseRouter
    private let socketPath: String
    /// The first error seen, so the close reason says what broke.
    private var failure: (any Error)?

    init(router: ResponseRouter, socketPath: String) {
        self.router = router
        self.socketPath = socketPath
    }

    /// The fields that tell an answer from a notification.
    private struct Head: Decodable {
        var id: RequestID?
        var method: String?
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard let bytes = buffer.readBytes(length: buffer.readableBytes), !bytes.isEmpty else { return }
        let line = Data(bytes)
        // A line that is not JSON, or an answer with an id this client never sent, cannot be
        // routed to anyone; dropping it keeps the other calls going.
        guard let head = try? JSONDecoder().decode(Head.self, from: line) else { return }
        if let id = head.id {
            if case .int(let number) = id { router.deliver(id: number, line: line) }
        } else if head.method != nil, let notification = try? JSONDecoder().decode(RPCNotification.self, from: line) {
            // A known name with a malformed shape is passed on raw rather than lost.
            router.publish((try? ServerNotification(notification)) ?? .other(notification))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if failure == nil { failure = error }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let reason = failure.map { String(describing: $0) } ?? "the daemon closed the connection"
        router.close(with: .connectionClosed(socketPath: socketPath, reason: reason))
        context.fireChannelInactive()
    }
}
