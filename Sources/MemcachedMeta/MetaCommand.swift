import NIOCore

/// One meta-protocol request, as this client sends it (memcached ≥ 1.6, protocol.txt
/// "Meta Commands"). Keys are wire keys (`MetaKey.wire`), TTLs whole seconds.
public enum MetaCommand: Sendable, Equatable {
    /// `mg <key> v t [N<ttl>]`: the value; with `vivify`, a miss creates an empty placeholder
    /// for that long and answers `W` (you fetch) to the first caller, `Z` to the others.
    case get(key: String, vivify: UInt32?)
    /// `ms <key> <length> T<ttl>`: stores the value (ending any claim on the key).
    case set(key: String, value: [UInt8], ttl: UInt32)
    /// `md <key>`: deletes.
    case delete(key: String)
    /// `ma <key> N<ttl> J<initial> v`: adds one, creating the counter at `initial` with that
    /// lifetime when missing; answers the new value.
    case increment(key: String, initial: UInt64, ttl: UInt32)
    /// `mn`: answers `MN`; a round trip that touches no item.
    case noop

    /// The wire key, if the command has one.
    public var key: String? {
        switch self {
        case .get(let key, _), .set(let key, _, _), .delete(let key), .increment(let key, _, _): key
        case .noop: nil
        }
    }

    /// Appends the request's bytes to `buffer`.
    func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .get(let key, let vivify):
            buffer.writeString("mg \(key) v t")
            if let vivify { buffer.writeString(" N\(vivify)") }
            buffer.writeString("\r\n")
        case .set(let key, let value, let ttl):
            buffer.writeString("ms \(key) \(value.count) T\(ttl)\r\n")
            buffer.writeBytes(value)
            buffer.writeString("\r\n")
        case .delete(let key):
            buffer.writeString("md \(key)\r\n")
        case .increment(let key, let initial, let ttl):
            buffer.writeString("ma \(key) N\(ttl) J\(initial) v\r\n")
        case .noop:
            buffer.writeString("mn\r\n")
        }
    }

    /// Bytes this request puts on the wire (for the byte counters): counted, not encoded.
    var wireSize: Int {
        switch self {
        case .get(let key, let vivify): return 10 + key.utf8.count + (vivify == nil ? 0 : 12)
        case .set(let key, let value, _): return 20 + key.utf8.count + value.count + 2
        case .delete(let key): return 5 + key.utf8.count
        case .increment(let key, _, _): return 40 + key.utf8.count
        case .noop: return 4
        }
    }

    /// A `Duration` as memcached TTL seconds: rounded up, at least 1 (0 would mean "never
    /// expires"), at most 30 days (more is read as an absolute Unix time by the server).
    public static func seconds(_ duration: Duration) -> UInt32 {
        let (whole, fraction) = duration.components
        guard whole >= 0 else { return 1 }
        let rounded = whole >= Int64(Self.maximumTTL) ? Int64(Self.maximumTTL) : whole + (fraction > 0 ? 1 : 0)
        return UInt32(max(1, min(rounded, Int64(Self.maximumTTL))))
    }

    /// 30 days: memcached's largest relative TTL.
    public static let maximumTTL: UInt32 = 2_592_000
}
