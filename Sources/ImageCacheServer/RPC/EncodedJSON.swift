import Foundation

/// A result that is already JSON text, spliced into the response as it is.
///
/// For answers that change rarely and are asked often (`hello` changes only on reload):
/// encoding them once instead of per request is most of the cost of a trivial round trip.
/// The bytes must be one valid JSON value without a raw newline, which `init(encoding:)`
/// guarantees by producing them with `JSONEncoder`.
public struct EncodedJSON: Encodable, Sendable {
    /// The JSON text of the value.
    public let bytes: [UInt8]

    /// Encodes `value` now, with the same encoder settings as every other answer.
    public init<T: Encodable>(encoding value: T) throws {
        bytes = Array(try MessageEncoder.encoder.encode(value))
    }

    /// When something encodes this value generically (not through the server's fast path),
    /// the text is parsed back into a value so the output is still correct JSON.
    public func encode(to encoder: any Encoder) throws {
        try MessageEncoder.decoder.decode(JSONValue.self, from: Data(bytes)).encode(to: encoder)
    }
}
