/// The framing of the records the engine keeps in the shared tier (search pages, photo records,
/// `photo.get` details, a fleet stop): a small versioned header before the payload, so that a
/// value written by another version, another program sharing the server, or a damaged server
/// is recognised as not ours and read as a miss.
///
/// Layout (big-endian): magic `ICR` (3 bytes), format version (1), kind (1), payload length
/// (4), SHA-256 of the payload (32), then the payload. `decode` checks every field, the exact
/// length and the checksum before the payload is handed on; it never traps, whatever the
/// bytes, and refuses a payload over `maximumPayload` before looking further.
package enum SharedRecordFrame {
    /// What a record holds; a value of another kind under a key is a miss.
    package enum Kind: UInt8, Sendable {
        /// A search result page (`SharedSearchRecords`).
        case searchPage = 1
        /// A photo as a search returned it: what resolves an id to its image URLs.
        case photo = 2
        /// A photo as `photo.get` answered it (the provider's details merged in).
        case photoDetails = 3
        /// A provider's quota answer: the fleet stops asking until the time it holds.
        case fleetStop = 4
    }

    /// The header's first bytes.
    static let magic: [UInt8] = Array("ICR".utf8)
    /// The format this build writes and reads; another version is a miss.
    package static let version: UInt8 = 1
    /// Bytes before the payload.
    package static let headerLength = 3 + 1 + 1 + 4 + 32
    /// The largest payload read: above memcached's default item size (1 MiB), so nothing the
    /// tier can hold is refused, and small enough that decoding a hostile value costs little.
    package static let maximumPayload = 4 << 20

    /// `payload` framed as `kind`.
    public static func encode(_ kind: Kind, payload: [UInt8]) -> [UInt8] {
        var out = magic
        out.reserveCapacity(headerLength + payload.count)
        out.append(version)
        out.append(kind.rawValue)
        let length = UInt32(truncatingIfNeeded: payload.count)
        out += [UInt8(length >> 24), UInt8((length >> 16) & 0xff), UInt8((length >> 8) & 0xff), UInt8(length & 0xff)]
        out += SHA256Digest.digest(payload)
        out += payload
        return out
    }

    /// The payload of a value framed as `kind` by this format version, or nil for anything else:
    /// too short, another magic, version or kind, a length that disagrees with the value's, a
    /// payload over `maximumPayload`, or a checksum that does not match.
    public static func decode(_ value: [UInt8], as kind: Kind) -> [UInt8]? {
        guard value.count >= headerLength, Array(value[0..<3]) == magic, value[3] == version,
              value[4] == kind.rawValue else { return nil }
        let declared = Int(value[5]) << 24 | Int(value[6]) << 16 | Int(value[7]) << 8 | Int(value[8])
        guard declared <= maximumPayload, value.count - headerLength == declared else { return nil }
        let payload = Array(value[headerLength...])
        guard SHA256Digest.digest(payload) == Array(value[9..<headerLength]) else { return nil }
        return payload
    }
}
