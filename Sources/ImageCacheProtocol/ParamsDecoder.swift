import Foundation

/// Turns a request's raw `params` into a method's typed params, refusing anything the
/// contract does not allow, with -32602 and `data.field` naming the offending param.
///
/// Strict on purpose: a misspelled or positional param silently ignored would run the
/// request with defaults the client never meant. Rules (CONTRACT §2, §3):
/// - absent (or null) params mean `{}`, so every param takes its default;
/// - params must be an object: an array (positional params) or a scalar is refused;
/// - a name not in `T.fieldNames` is refused (the first such name, alphabetically);
/// - a missing required param, a null where a value is required, a value of the wrong JSON
///   type or an unknown enum value is refused, naming the param (`photos[2]` inside a list);
/// - finally `T.validate()` checks ranges and mutually exclusive alternatives.
/// An explicit `null` for an optional param is the same as leaving it out.
public enum ParamsDecoder {
    /// Decodes `params` into `T` under the rules above.
    public static func decode<T: RPCParams>(_ type: T.Type, from params: JSONValue?) throws(RPCError) -> T {
        let members: [String: JSONValue]
        switch params {
        case nil, .null?:
            members = [:]
        case .object(let object)?:
            members = object
        case .array?:
            throw RPCError(.invalidParams, "params must be an object of named params, not an array (positional params are not supported)")
        case .bool?, .int?, .double?, .string?:
            throw RPCError(.invalidParams, "params must be an object of named params")
        }
        if let unknown = members.keys.filter({ !T.fieldNames.contains($0) }).sorted().first {
            let accepted = T.fieldNames.sorted().joined(separator: ", ")
            let hint = accepted.isEmpty ? "this method takes no params" : "accepted: \(accepted)"
            throw RPCError(.invalidParams, "unknown param '\(unknown)' (\(hint))", field: unknown)
        }
        let value: T
        do {
            let data = try JSONEncoder().encode(JSONValue.object(members))
            value = try JSONDecoder().decode(T.self, from: data)
        } catch let error as RPCError {
            throw error
        } catch let error as DecodingError {
            throw rpcError(for: error)
        } catch {
            throw RPCError(.invalidParams, "params could not be read: \(error)")
        }
        try value.validate()
        return value
    }

    /// The -32602 for a decoding failure, with the param's path as `data.field`.
    static func rpcError(for error: DecodingError) -> RPCError {
        switch error {
        case .keyNotFound(let key, let context):
            let field = fieldPath(context.codingPath + [key])
            return RPCError(.invalidParams, "missing required param '\(field)'", field: field)
        case .valueNotFound(let type, let context):
            let field = fieldPath(context.codingPath)
            return RPCError(.invalidParams, "param '\(field)' must be \(typeName(type)), not null", field: field)
        case .typeMismatch(let type, let context):
            let field = fieldPath(context.codingPath)
            return RPCError(.invalidParams, "param '\(field)' must be \(typeName(type))", field: field)
        case .dataCorrupted(let context):
            let field = fieldPath(context.codingPath)
            return RPCError(.invalidParams, "param '\(field)' \(context.debugDescription)", field: field.isEmpty ? nil : field)
        @unknown default:
            return RPCError(.invalidParams, "params could not be read: \(error)")
        }
    }

    /// `photos[2]` for the coding path photos → index 2; names joined by dots otherwise.
    static func fieldPath(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue, key.stringValue.hasPrefix("Index") || key.stringValue == String(index) {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }

    /// A person's word for the JSON type a Swift type is decoded from.
    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean (true or false)"
        case is Int.Type: return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        case is [Any].Type: return "an array"
        case is [String: Any].Type: return "an object"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array<") { return "an array" }
            if name.hasPrefix("Dictionary<") { return "an object" }
            return "a valid value"
        }
    }
}

extension RPCError {
    /// Shorthand for the -32602 that a params type's `validate()` throws.
    public static func invalidParam(_ field: String, _ message: String) -> RPCError {
        RPCError(.invalidParams, message, field: field)
    }
}
