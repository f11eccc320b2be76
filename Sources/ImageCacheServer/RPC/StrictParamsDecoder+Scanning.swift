import ImageCacheProtocol

/// The one params decoder's scanning mode: a params object read straight from a request
/// line's bytes (`RequestScanner`) into `P` through `P`'s own `init(from:)` and `CodingKeys`,
/// the same code the strict decoder runs on a `JSONValue`. So a param added to a scannable
/// type is read by the fast path at once; nothing lists the members a second time.
///
/// The mode is strict the way `StrictParamsDecoder` is, and declines (nil) wherever it would
/// have to say why: a member the type does not read, a value of another type, a null, a
/// nested object or array, a member given twice, a `decode` that throws. The line then takes
/// the general path, which decodes it or names the fault, so every error still has one
/// wording. `validate()` is left to the route, as on the general path.
extension StrictParamsDecoder {
    /// The most members a scanned params object may hold; more take the general path.
    static let scannedMemberLimit = 16

    /// `P` from the params object at the scanner's position; nil to take the general path.
    static func scan<P: Decodable>(_ type: P.Type, from scanner: inout RequestScanner) -> P? {
        // The members live on the stack for the decode: no table is allocated per request.
        withUnsafeTemporaryAllocation(of: ScannedMember.self, capacity: scannedMemberLimit) { members -> P? in
            var count = 0
            let read = scanner.object { scanner, key in
                guard count < scannedMemberLimit, let value = scanner.scalar() else { return false }
                // Each member once: a repeated one is the general path's to judge.
                for index in 0..<count where RequestScanner.same(members[index].key, key) { return false }
                (members.baseAddress! + count).initialize(to: ScannedMember(key: key, value: value))
                count += 1
                return true
            }
            defer { members.baseAddress!.deinitialize(count: count) }
            guard read else { return nil }
            let object = UnsafeMutableBufferPointer(rebasing: members[0..<count])
            guard let value = try? P(from: ScanningDecoder(members: object)) else { return nil }
            // A member no container read is an unknown param: the general path names it.
            return object.allSatisfy(\.used) ? value : nil
        }
    }
}

/// A member of a scanned object: its key's bytes (in the request line), its value, and
/// whether a container read it.
struct ScannedMember {
    let key: UnsafeRawBufferPointer
    let value: ScannedScalar
    var used = false
}

/// A value `RequestScanner.scalar()` reads: the plain forms only (see `RequestScanner`).
enum ScannedScalar {
    case string(String)
    case integer(Int)
    case bool(Bool)
}

/// Why a scanned decode stopped; never seen outside (the scanner declines).
private struct ScanDeclined: Error {}

/// The `Decoder` over one scanned params object. It lives only during
/// `StrictParamsDecoder.scan` (its members are on that call's stack).
private struct ScanningDecoder: Decoder {
    let members: UnsafeMutableBufferPointer<ScannedMember>
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ScannedContainer<Key>(members: members))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw ScanDeclined() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw ScanDeclined() }
}

/// The keyed container of a scanned object: each `decode` finds its key among the members
/// and marks it read. Only `String`, `Int` and `Bool` (and types decoding from them through a
/// single value, which the scanner declines) are read; anything else declines.
private struct ScannedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: UnsafeMutableBufferPointer<ScannedMember>
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        members.compactMap { Key(stringValue: String(decoding: $0.key, as: UTF8.self)) }
    }

    func contains(_ key: Key) -> Bool { index(of: key) != nil }

    private func index(of key: Key) -> Int? {
        var name = key.stringValue
        return name.withUTF8 { name in
            members.firstIndex { RequestScanner.same($0.key, UnsafeRawBufferPointer(name)) }
        }
    }

    /// The member for `key`, marked read; throws when absent (a required member is missing).
    private func take(_ key: Key) throws -> ScannedScalar {
        guard let value = takeIfPresent(key) else { throw ScanDeclined() }
        return value
    }

    /// The member for `key`, marked read; nil when absent. One search of the members (a
    /// `contains` then a `take` searched twice, on every optional param of every request).
    private func takeIfPresent(_ key: Key) -> ScannedScalar? {
        guard let index = index(of: key) else { return nil }
        members[index].used = true
        return members[index].value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        // The scanner never reads a null: a present member is not nil.
        guard let index = index(of: key) else { throw ScanDeclined() }
        members[index].used = true
        return false
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        guard case .string(let value) = try take(key) else { throw ScanDeclined() }
        return value
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        guard case .integer(let value) = try take(key) else { throw ScanDeclined() }
        return value
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        guard case .bool(let value) = try take(key) else { throw ScanDeclined() }
        return value
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let member = takeIfPresent(key) else { return nil }
        guard case .string(let value) = member else { throw ScanDeclined() }
        return value
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let member = takeIfPresent(key) else { return nil }
        guard case .integer(let value) = member else { throw ScanDeclined() }
        return value
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let member = takeIfPresent(key) else { return nil }
        guard case .bool(let value) = member else { throw ScanDeclined() }
        return value
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        // A type decoding from one scalar (a `ParamEnum`) reads it; nested objects, arrays
        // and other numbers decline there, for the general path.
        try T(from: ScalarDecoder(value: try take(key)))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let member = takeIfPresent(key) else { return nil }
        return try T(from: ScalarDecoder(value: member))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type,
                                               forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw ScanDeclined()
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw ScanDeclined() }
    func superDecoder() throws -> any Decoder { throw ScanDeclined() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw ScanDeclined() }

    // The other fixed-width types: the scanner reads only `Int`; they take the general path.
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { throw ScanDeclined() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw ScanDeclined() }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { throw ScanDeclined() }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { throw ScanDeclined() }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { throw ScanDeclined() }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { throw ScanDeclined() }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { throw ScanDeclined() }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { throw ScanDeclined() }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { throw ScanDeclined() }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { throw ScanDeclined() }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { throw ScanDeclined() }
}

/// The `Decoder` over one scanned scalar, for a type that decodes from a single value (a
/// `ParamEnum`'s raw string): `String`, `Int` and `Bool` are read, everything else declines.
private struct ScalarDecoder: Decoder, SingleValueDecodingContainer {
    let value: ScannedScalar
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> { throw ScanDeclined() }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw ScanDeclined() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { false }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let value) = value else { throw ScanDeclined() }
        return value
    }

    func decode(_ type: Int.Type) throws -> Int {
        guard case .integer(let value) = value else { throw ScanDeclined() }
        return value
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let value) = value else { throw ScanDeclined() }
        return value
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { throw ScanDeclined() }
    func decode(_ type: Double.Type) throws -> Double { throw ScanDeclined() }
    func decode(_ type: Float.Type) throws -> Float { throw ScanDeclined() }
    func decode(_ type: Int8.Type) throws -> Int8 { throw ScanDeclined() }
    func decode(_ type: Int16.Type) throws -> Int16 { throw ScanDeclined() }
    func decode(_ type: Int32.Type) throws -> Int32 { throw ScanDeclined() }
    func decode(_ type: Int64.Type) throws -> Int64 { throw ScanDeclined() }
    func decode(_ type: UInt.Type) throws -> UInt { throw ScanDeclined() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { throw ScanDeclined() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { throw ScanDeclined() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { throw ScanDeclined() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { throw ScanDeclined() }
}
