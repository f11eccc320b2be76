/// An optional field the wire always carries: written as `null` when there is no value, where
/// Swift's synthesised `Codable` would leave the key out. Read as nil whether the key is null
/// or missing, so an older or terser writer is still understood.
///
/// The protocol shows unknown values as null (a job's `total` before the server says it, a
/// provider's `rateLimitRemaining` before its first answer), and a client tells "not known yet"
/// from "this daemon has no such field" by the key. Marking the field keeps the type's coding
/// synthesised: without it, each such type wrote its whole `encode(to:)` by hand for one line.
@propertyWrapper
public struct ExplicitNull<Value: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    /// The field's value; nil is written as `null`.
    public var wrappedValue: Value?

    /// Wraps a value (what `self.field = value` in an initialiser does).
    public init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    /// Reads `null` as nil, anything else as a `Value`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    /// Writes the value, or `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    /// A missing key reads as nil: the synthesised decoder asks for the wrapper by key, and
    /// without this overload a missing key would be an error.
    public func decode<Value>(_ type: ExplicitNull<Value>.Type, forKey key: Key) throws -> ExplicitNull<Value> {
        try decodeIfPresent(type, forKey: key) ?? ExplicitNull(wrappedValue: nil)
    }
}
