import Foundation
import ImageCacheProtocol

/// A provider's JSON answer, read the way real answers need: tolerant of nulls, missing
/// optional fields, unknown fields and numbers sent as strings (Flickr sends `"width_t":"100"`
/// and `"height_n":240` in the same record), strict about the fields a photo cannot do without.
///
/// Reading goes through `JSONValue` rather than `Decodable` structs because the providers'
/// shapes vary between years and endpoints; each decoder states what it requires with
/// `required(_:)`, and everything else degrades to nil.
struct LenientJSON: Sendable {
    let value: JSONValue?

    init(_ value: JSONValue?) { self.value = value }

    /// Parses a body; a body that is not JSON at all throws `LenientJSON.NotJSON`.
    static func parse(_ bytes: [UInt8]) throws -> LenientJSON {
        do {
            return LenientJSON(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)))
        } catch {
            throw NotJSON()
        }
    }

    /// The body is not JSON.
    struct NotJSON: Error {}

    /// A required field is missing, null or of an unusable type; `field` names its path.
    struct MissingField: Error {
        let field: String
    }

    subscript(key: String) -> LenientJSON {
        if case .object(let o)? = value { return LenientJSON(o[key]) }
        return LenientJSON(nil)
    }

    /// Whether the value is absent or JSON null.
    var isNull: Bool {
        switch value {
        case nil, .null?: return true
        default: return false
        }
    }

    var isObject: Bool { if case .object? = value { return true } else { return false } }

    /// A string, or a number written as a string (ids sometimes come as numbers).
    var string: String? {
        switch value {
        case .string(let s)?: return s
        case .int(let i)?: return String(i)
        case .double(let d)?: return d.rounded() == d && abs(d) < 1e15 ? String(Int(d)) : String(d)
        default: return nil
        }
    }

    /// A string with content after trimming, else nil (empty descriptions count as none).
    var text: String? {
        guard let s = string?.trimmingCharacters(in: .whitespacesAndNewlines), !s.isEmpty else { return nil }
        return s
    }

    /// An integer from a number, an integral double, or a numeric string. A JSON boolean
    /// counts as 0/1, in case a decoder reads a bare 0 or 1 as one.
    var int: Int? {
        switch value {
        case .int(let i)?: return i
        case .bool(let b)?: return b ? 1 : 0
        case .double(let d)?: return d.isFinite && d.rounded() == d && abs(d) < 9e15 ? Int(d) : nil
        case .string(let s)?:
            let t = s.trimmingCharacters(in: .whitespaces)
            if let i = Int(t) { return i }
            if let d = Double(t), d.isFinite, d.rounded() == d, abs(d) < 9e15 { return Int(d) }
            return nil
        default: return nil
        }
    }

    var array: [LenientJSON]? {
        if case .array(let a)? = value { return a.map(LenientJSON.init) }
        return nil
    }

    var bool: Bool? {
        switch value {
        case .bool(let b)?: return b
        case .int(let i)?: return i != 0
        case .string(let s)?: return ["1", "true"].contains(s.lowercased())
        default: return nil
        }
    }

    /// Why a record could not be read, for a log line (never the body itself).
    static func reason(_ error: any Error) -> String {
        if let missing = error as? MissingField { return "missing or unusable '\(missing.field)'" }
        return "unreadable record"
    }

    /// A required string field: present, non-empty.
    func requiredString(_ key: String, path: String = "") throws -> String {
        guard let s = self[key].string, !s.isEmpty else { throw MissingField(field: path + key) }
        return s
    }

    /// A required integer field.
    func requiredInt(_ key: String, path: String = "") throws -> Int {
        guard let i = self[key].int else { throw MissingField(field: path + key) }
        return i
    }

    /// A required array field.
    func requiredArray(_ key: String, path: String = "") throws -> [LenientJSON] {
        guard let a = self[key].array else { throw MissingField(field: path + key) }
        return a
    }
}
