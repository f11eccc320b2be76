import ImageCacheKit
import ImageCacheProtocol

extension MessageEncoder {
    /// The answer carrying `result`: its success response, or, when the result cannot be
    /// encoded (logged: a bug), -32603. What every typed result is sent with; beside the
    /// request's context, whose logger it reports to, so the wire messages need no context.
    static func answer<R: Encodable>(id: RequestID, result: R, context: RequestContext) -> OutboundMessage {
        do {
            return try success(id: id, result: result)
        } catch {
            context.logger.error("a result could not be encoded", metadata: ["error": "\(error)"])
            return failure(id: id, error: RPCError(.internal, "internal error: the result could not be encoded"))
        }
    }
}
