/// What a transfer reports while it runs. Events are delivered on the engine's curl thread,
/// in order, so a handler must be quick and must not block (hand work to a task or a queue).
public enum TransferEvent: Sendable, Equatable {
    /// Bytes of the body received so far and the expected total when the server said it
    /// (Content-Length; with a resume both include the bytes already on disk). At most ten per
    /// second per transfer, plus a final one when the body is complete; a transfer into a
    /// caller's file (`TransferRequest.resume`) also every 256 KiB, so that a reader tailing
    /// the file (a download's verifier) is woken as the bytes land.
    case progress(received: Int, expected: Int?)
    /// The next bytes of the body (only when requested), so an image header can be read from
    /// the first kilobytes long before the body ends. `offset` is the position in the body.
    case chunk(offset: Int, bytes: [UInt8])
    /// The request is being sent again after a failure (a count for stats and the curious).
    case retrying(attempt: Int, reason: String)
    /// The head of an answer whose body will be kept arrived, before its first body byte is
    /// written: where its bytes start in the body (0: the file was emptied and the body starts
    /// over; else the `.part`'s length, a checked `206`), the body's complete length when the
    /// server said it, and the validator a later `If-Range` needs (strong `ETag`, else
    /// `Last-Modified`; nil when neither). A resumable download records these at once instead
    /// of paying a probe request.
    case response(offset: Int, total: Int?, validator: String?)
}
