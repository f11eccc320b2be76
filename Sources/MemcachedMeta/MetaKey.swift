/// The key memcached receives for a caller's key.
///
/// memcached's text keys are at most 250 bytes with no space or control character. A key
/// that fits (`prefix` + key, printable ASCII, ≤ 250 bytes) goes as it is, readable in
/// `mg`/`lru_crawler metadump` while debugging; any other (a long URL, non-ASCII) goes as
/// `prefix` + `#` + the 32 hex digits of the MD5 of the whole prefixed key. The `#` cannot
/// collide with a pass-through key of the same shape only by accident of MD5, and values are
/// verified by their reader anyway. (The meta protocol's base64 keys, flag `b`, would keep any
/// byte, but still only 250 decoded bytes: URLs are often longer, so hashing is needed anyway.)
public enum MetaKey {
    /// The longest key memcached accepts.
    public static let maximumLength = 250

    /// The wire key for `key` under `prefix`.
    public static func wire(_ key: String, prefix: String) -> String {
        let full = prefix + key
        if isPlain(full.utf8) { return full }
        let hashed = "#" + MD5.hex(Array(full.utf8))
        return isPlain(prefix.utf8) && prefix.utf8.count + hashed.utf8.count <= maximumLength ? prefix + hashed : hashed
    }

    /// Whether `text` can be a memcached key as it is.
    public static func isPlain(_ text: String.UTF8View) -> Bool {
        !text.isEmpty && text.count <= maximumLength && text.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }
}
