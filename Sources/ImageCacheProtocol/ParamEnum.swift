/// A param or result field that takes one of a fixed set of strings (`variant`, `what`,
/// `feed`, `source`, `dims`, `state`).
///
/// Decoding an unknown value fails with a message listing the accepted ones, which
/// `StrictParamsDecoder` passes on to the client in its -32602: "param 'variant' must be one of
/// full, regular" tells a person what to type, "invalid data" does not.
public protocol ParamEnum: RawRepresentable, CaseIterable, Codable, Sendable, Hashable where RawValue == String {}

extension ParamEnum {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let raw = try c.decode(String.self)
        guard let value = Self(rawValue: raw) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "must be one of \(Self.acceptedValues)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }

    /// The accepted values, comma-separated, for messages and docs.
    public static var acceptedValues: String {
        allCases.map(\.rawValue).joined(separator: ", ")
    }
}
