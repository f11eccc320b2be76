import Foundation
import ImageCacheProtocol

/// Parses a JSON text (a test literal) into a JSONValue, as the server's framing would.
func jsonValue(_ text: String) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
}

/// Encodes a value and reads it back as a plain JSON object, to check field names and nulls
/// exactly as a client in another language would see them.
func jsonObject(_ value: some Encodable) throws -> [String: Any] {
    let data = try JSONEncoder().encode(value)
    guard let object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? [String: Any] else {
        throw CocoaError(.coderReadCorrupt)
    }
    return object
}

/// Decodes params from a JSON text with the server's strict rules (decoded, then validated, as its router does).
func decodeParams<T: RPCParams>(_ type: T.Type, _ text: String?) throws(RPCError) -> T {
    let value: JSONValue?
    do {
        value = try text.map(jsonValue)
    } catch {
        throw RPCError(.parseError, "test literal is not JSON: \(error)")
    }
    return try StrictParamsDecoder.decodeAndValidate(T.self, from: value)
}

/// The RPCError a strict decode throws, or nil when it succeeds.
func paramsError<T: RPCParams>(_ type: T.Type, _ text: String?) -> RPCError? {
    do {
        _ = try decodeParams(type, text)
        return nil
    } catch {
        return error
    }
}

/// Decodes a typed value from a JSON text leniently, as a client reads answers.
func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
    try JSONDecoder().decode(T.self, from: Data(text.utf8))
}

/// True when `object[key]` is present and JSON null.
func isNull(_ object: [String: Any], _ key: String) -> Bool {
    guard let value = object[key] else { return false }
    return value is NSNull
}
