import COpenSSLCrypto
import Foundation

/// SHA-256 through OpenSSL's libcrypto, already loaded by libcurl.
///
/// Cache files are named by the digest of their key and checked against the digest of
/// their content on first read after a start; a hand-written hash would be one more thing
/// to get wrong.
package enum SHA256Digest {
    /// The 32-byte digest of `bytes`.
    package static func digest<Bytes: ContiguousBytes>(_ bytes: Bytes) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        bytes.withUnsafeBytes { raw in
            out.withUnsafeMutableBufferPointer { dst in
                _ = SHA256(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, dst.baseAddress)
            }
        }
        return out
    }

    /// The digest as 64 lowercase hex characters.
    package static func hex<Bytes: ContiguousBytes>(_ bytes: Bytes) -> String {
        let hexDigits = Array("0123456789abcdef".utf8)
        var chars = [UInt8]()
        chars.reserveCapacity(64)
        for byte in digest(bytes) {
            chars.append(hexDigits[Int(byte >> 4)])
            chars.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: chars, as: UTF8.self)
    }
}
