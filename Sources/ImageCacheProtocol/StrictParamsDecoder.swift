/// Decodes a method's typed params from the request's `params` value, strictly: the one
/// params decoder of the daemon (its router runs it for every method; tests and the fuzzers
/// go through it too).
///
/// Strict means what docs/protocol.md (Framing and JSON-RPC) asks: params are named (an
/// object; positional params are refused), every member must be one the type reads (an
/// unknown name is an error, not silently ignored, so a typo never turns into a default),
/// numbers are not strings, and every failure names the offending param in `data.field`
/// (`"photos[2]"`, `"author.name"`).
///
/// It reads `JSONValue` directly, so params are never re-serialised between the framing and
/// the handler, and it records which keys each object container read to find unknown ones.
public enum StrictParamsDecoder {
    /// Decodes `P` from a request's params, then runs its `validate()`: what the router does
    /// before any handler runs, so a handler only ever sees params that passed both.
    ///
    /// - Throws: `RPCError` of kind `invalid_params` with `field` set.
    public static func decodeAndValidate<P: RPCParams>(_ type: P.Type, from params: JSONValue?) throws(RPCError) -> P {
        let value = try decode(P.self, from: params)
        try value.validate()
        return value
    }

    /// Decodes `P` from a request's params (its shape only: no `validate()`); absent or null
    /// params decode as `{}`.
    ///
    /// - Throws: `RPCError` of kind `invalid_params` with `field` set.
    public static func decode<P: Decodable>(_ type: P.Type, from params: JSONValue?) throws(RPCError) -> P {
        let object: JSONValue
        switch params {
        case nil, .null?:
            object = .object([:])
        case .object?:
            object = params!
        case .array?:
            throw RPCError(.invalidParams, "params must be named (a JSON object), not positional", field: "params")
        default:
            throw RPCError(.invalidParams, "params must be a JSON object", field: "params")
        }
        let tracker = KeyUsageTracker()
        let value: P
        do {
            value = try P(from: StrictDecoder(value: object, codingPath: [], tracker: tracker))
        } catch let error as DecodingError {
            throw Self.rpcError(for: error)
        } catch let error as RPCError {
            throw error
        } catch {
            throw RPCError(.invalidParams, "invalid params: \(error)", field: "params")
        }
        if let unknown = tracker.firstUnknownKey() {
            let field = fieldName(unknown.path, appending: unknown.key)
            throw RPCError(.invalidParams, "unknown param \"\(field)\"\(hint(accepting: unknown.accepted))", field: field)
        }
        return value
    }

    /// What follows an unknown param's name: the names its object accepts, when its keys can
    /// be listed (`CodingKeys: CaseIterable`, as every params type of the protocol has).
    private static func hint(accepting accepted: [String]?) -> String {
        guard let accepted else { return "" }
        if accepted.isEmpty { return " (this method takes no params)" }
        return " (accepted: \(accepted.sorted().joined(separator: ", ")))"
    }

    /// A dotted path as clients write it: `author.name`, `photos[2]`.
    static func fieldName(_ path: [any CodingKey], appending last: String? = nil) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        if let last { text += text.isEmpty ? last : "." + last }
        return text.isEmpty ? "params" : text
    }

    private static func rpcError(for error: DecodingError) -> RPCError {
        switch error {
        case .keyNotFound(let key, let context):
            let field = fieldName(context.codingPath, appending: key.stringValue)
            return RPCError(.invalidParams, "missing param \"\(field)\"", field: field)
        case .typeMismatch(let type, let context):
            let field = fieldName(context.codingPath)
            return RPCError(.invalidParams, "param \"\(field)\" must be \(describe(type))", field: field)
        case .valueNotFound(let type, let context):
            let field = fieldName(context.codingPath)
            return RPCError(.invalidParams, "param \"\(field)\" must be \(describe(type)), not null", field: field)
        case .dataCorrupted(let context):
            let field = fieldName(context.codingPath)
            return RPCError(.invalidParams, "param \"\(field)\": \(context.debugDescription)", field: field)
        @unknown default:
            return RPCError(.invalidParams, "invalid params", field: "params")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type, is UInt32.Type,
             is Int16.Type, is Int8.Type, is UInt16.Type, is UInt8.Type:
            return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        default: return "of type \(type)"
        }
    }
}

/// Which keys of each decoded object were read. Decoding is synchronous and local to one
/// call, so this class never crosses threads.
final class KeyUsageTracker {
    final class Entry {
        let path: [any CodingKey]
        let keys: [String]
        /// The container's key type, to list the accepted names in an error (read only then).
        let keyType: any CodingKey.Type
        var used: Set<String> = []
        init(path: [any CodingKey], keys: [String], keyType: any CodingKey.Type) {
            self.path = path
            self.keys = keys
            self.keyType = keyType
        }
    }

    private var entries: [Entry] = []

    func track(path: [any CodingKey], keys: [String], keyType: any CodingKey.Type) -> Entry {
        let entry = Entry(path: path, keys: keys, keyType: keyType)
        entries.append(entry)
        return entry
    }

    /// The first key (in sorted order, so errors are stable) that no container read, with the
    /// names its container accepts when they can be listed.
    func firstUnknownKey() -> (path: [any CodingKey], key: String, accepted: [String]?)? {
        for entry in entries {
            if let key = entry.keys.sorted().first(where: { !entry.used.contains($0) }) {
                return (entry.path, key, Self.names(of: entry.keyType))
            }
        }
        return nil
    }

    private static func names(of keyType: any CodingKey.Type) -> [String]? {
        guard let listable = keyType as? any (CodingKey & CaseIterable).Type else { return nil }
        return names(listable)
    }

    private static func names<K: CodingKey & CaseIterable>(_: K.Type) -> [String] {
        K.allCases.map(\.stringValue)
    }
}

/// An index in an array, as a coding key (for `photos[2]`).
private struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { self.intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct StrictDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let tracker: KeyUsageTracker
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw DecodingError.typeMismatch([String: JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an object"))
        }
        let entry = tracker.track(path: codingPath, keys: Array(object.keys), keyType: Key.self)
        return KeyedDecodingContainer(StrictKeyedContainer<Key>(object: object, codingPath: codingPath, tracker: tracker, entry: entry))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else {
            throw DecodingError.typeMismatch([JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an array"))
        }
        return StrictUnkeyedContainer(array: array, codingPath: codingPath, tracker: tracker)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        StrictSingleValueContainer(value: value, codingPath: codingPath, tracker: tracker)
    }
}

/// The one place where a JSON value becomes a Swift value: exact types only (an integral
/// JSON number may become a floating value, never the other way round unless exact).
private func unbox<T: Decodable>(_ value: JSONValue, as type: T.Type, path: [any CodingKey], tracker: KeyUsageTracker) throws -> T {
    func mismatch() -> DecodingError {
        if case .null = value {
            return .valueNotFound(T.self, .init(codingPath: path, debugDescription: "null where a value is required"))
        }
        return .typeMismatch(T.self, .init(codingPath: path, debugDescription: "wrong type"))
    }
    if T.self == String.self {
        guard case .string(let s) = value else { throw mismatch() }
        return s as! T
    }
    if T.self == Bool.self {
        guard case .bool(let b) = value else { throw mismatch() }
        return b as! T
    }
    if T.self == Double.self || T.self == Float.self {
        let number: Double
        switch value {
        case .int(let i): number = Double(i)
        case .double(let d): number = d
        default: throw mismatch()
        }
        return (T.self == Double.self ? number as Any : Float(number) as Any) as! T
    }
    if let integerType = T.self as? any FixedWidthInteger.Type {
        func convert<I: FixedWidthInteger>(_: I.Type) throws -> T {
            switch value {
            case .int(let i):
                guard let exact = I(exactly: i) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(i) is out of range"))
                }
                return exact as! T
            case .double(let d):
                guard let exact = I(exactly: d) else { throw mismatch() }
                return exact as! T
            default:
                throw mismatch()
            }
        }
        return try convert(integerType)
    }
    if T.self == JSONValue.self {
        return value as! T
    }
    return try T(from: StrictDecoder(value: value, codingPath: path, tracker: tracker))
}

private struct StrictKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let codingPath: [any CodingKey]
    let tracker: KeyUsageTracker
    let entry: KeyUsageTracker.Entry

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func value(for key: Key) throws -> JSONValue {
        entry.used.insert(key.stringValue)
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        entry.used.insert(key.stringValue)
        if case .null? = object[key.stringValue] { return true }
        return object[key.stringValue] == nil
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try unbox(value(for: key), as: T.self, path: codingPath + [key], tracker: tracker)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        entry.used.insert(key.stringValue)
        guard let value = object[key.stringValue] else { return nil }
        if case .null = value { return nil }
        return try unbox(value, as: T.self, path: codingPath + [key], tracker: tracker)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decode(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decode(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decode(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decode(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decode(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decode(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decode(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decode(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decode(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decode(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decode(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decode(type, key) }

    private func decode<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        try unbox(value(for: key), as: T.self, path: codingPath + [key], tracker: tracker)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try StrictDecoder(value: value(for: key), codingPath: codingPath + [key], tracker: tracker).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try StrictDecoder(value: value(for: key), codingPath: codingPath + [key], tracker: tracker).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        StrictDecoder(value: .object(object), codingPath: codingPath, tracker: tracker)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try StrictDecoder(value: value(for: key), codingPath: codingPath + [key], tracker: tracker)
    }
}

private struct StrictUnkeyedContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let codingPath: [any CodingKey]
    let tracker: KeyUsageTracker
    var currentIndex = 0

    init(array: [JSONValue], codingPath: [any CodingKey], tracker: KeyUsageTracker) {
        self.array = array
        self.codingPath = codingPath
        self.tracker = tracker
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private mutating func next() throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return (array[currentIndex], codingPath + [IndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = array[currentIndex] else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next()
        return try unbox(value, as: T.self, path: path, tracker: tracker)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next()
        return try StrictDecoder(value: value, codingPath: path, tracker: tracker).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next()
        return try StrictDecoder(value: value, codingPath: path, tracker: tracker).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next()
        return StrictDecoder(value: value, codingPath: path, tracker: tracker)
    }
}

private struct StrictSingleValueContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let tracker: KeyUsageTracker

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try unbox(value, as: T.self, path: codingPath, tracker: tracker)
    }
}

extension RPCError {
    /// Shorthand for the -32602 that a params type's `validate()` throws.
    public static func invalidParam(_ field: String, _ message: String) -> RPCError {
        RPCError(.invalidParams, message, field: field)
    }
}
