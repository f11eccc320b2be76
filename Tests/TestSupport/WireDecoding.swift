import Foundation

extension Dictionary where Key == String, Value == Any {
    /// This wire object (an answer's `result`, a notification's `params`) decoded as `type`
    /// with `JSONDecoder`, as `ImageCacheClient` reads it.
    ///
    /// Comparing `a["k"] as? T == b["k"] as? T` passes when the key is missing on both sides
    /// (nil == nil). Decoded first, a missing or mistyped required field throws, so the
    /// comparison that follows is between the values the protocol's types say must be there.
    /// Integers and strings survive the round trip exactly; compare doubles from the raw line.
    public func decoded<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONSerialization.data(withJSONObject: self))
    }
}
