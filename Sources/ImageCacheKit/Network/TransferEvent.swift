/// What a transfer reports while it runs. Events are delivered on the engine's curl thread,
/// in order, so a handler must be quick and must not block (hand work to a task or a queue).
public enum TransferEvent: Sendable, Equatable {
    /// Bytes of the body received so far and the expected total when the server said it
    /// (Content-Length; with a resume both include the bytes already on disk). At most ten per
    /// second per transfer, plus a final one when the body is complete.
    case progress(received: Int, expected: Int?)
    /// The next bytes of the body (only when requested), so an image header can be read from
    /// the first kilobytes long before the body ends. `offset` is the position in the body.
    case chunk(offset: Int, bytes: [UInt8])
    /// The request is being sent again after a failure (a count for stats and the curious).
    case retrying(attempt: Int, reason: String)
}
