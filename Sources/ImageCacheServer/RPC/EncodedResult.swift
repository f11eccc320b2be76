/// A result of type `Value` already encoded, spliced into answers as it is.
///
/// For answers that change rarely and are asked often (`hello` changes only on reload):
/// encoding them once instead of per request is most of the cost of a trivial round trip.
/// Typed, so a route can only reuse an encoding of its own result type; made by the one
/// encoder every answer uses (`MessageEncoder.encoder`), so the bytes are one JSON value
/// without a raw newline.
public struct EncodedResult<Value: Encodable>: Sendable {
    /// The JSON text of the value.
    let bytes: [UInt8]

    /// Encodes `value` now.
    public init(_ value: Value) throws {
        bytes = Array(try MessageEncoder.encoder.encode(value))
    }
}
