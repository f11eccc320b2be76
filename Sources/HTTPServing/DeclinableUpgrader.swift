import NIOCore
import NIOHTTP1

/// An upgrader as `HTTPServer` runs it. An upgrader declines a request by failing its upgrade
/// response (a WebSocket upgrade the guard refuses); NIO then reports that failure down the
/// pipeline before passing the request on as an ordinary one. The failure becomes
/// `UpgradeDeclined`, which the connection handler does not take for a broken connection, so
/// the declined request is answered (a 403) instead of the connection being closed.
struct DeclinableUpgrader: HTTPServerProtocolUpgrader, Sendable {
    let inner: any HTTPServerProtocolUpgrader & Sendable

    var supportedProtocol: String { inner.supportedProtocol }
    var requiredUpgradeHeaders: [String] { inner.requiredUpgradeHeaders }

    func buildUpgradeResponse(channel: any Channel, upgradeRequest: HTTPRequestHead,
                              initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<HTTPHeaders> {
        inner.buildUpgradeResponse(channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
            .flatMapErrorThrowing { _ in throw UpgradeDeclined() }
    }

    func upgrade(context: ChannelHandlerContext, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<Void> {
        inner.upgrade(context: context, upgradeRequest: upgradeRequest)
    }
}

/// An upgrader said no: the request goes on as plain HTTP.
struct UpgradeDeclined: Error {}
