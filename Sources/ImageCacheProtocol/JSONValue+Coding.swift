import Foundation

extension JSONValue {
    /// The JSON of any `Encodable` value, as a `JSONValue` tree.
    ///
    /// Lets the daemon put a typed result or notification into the untyped envelope (whose
    /// `result`/`params` are `JSONValue`) with exactly the field names the type encodes.
    public init(encoding value: some Encodable) throws {
        let data = try JSONEncoder().encode(value)
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Decodes this JSON into a typed value (lenient: unknown keys are ignored, as a client
    /// reading a newer daemon's answers should). Servers decoding params use
    /// `StrictParamsDecoder` instead, which is strict.
    public func decode<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(self))
    }
}
