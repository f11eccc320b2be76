/// The photo providers the daemon knows, by the name used in photo ids, params and config.
///
/// A closed set: each has its own request shapes and error habits, so adding one means
/// writing its `PhotoProvider`, not configuring a URL.
public enum ProviderID: String, Sendable, Hashable, Codable, CaseIterable {
    case unsplash
    case flickr
    case pixabay

    /// How people write the provider's name (messages).
    package var displayName: String {
        switch self {
        case .unsplash: return "Unsplash"
        case .flickr: return "Flickr"
        case .pixabay: return "Pixabay"
        }
    }

    /// The `cache.conf` key that holds the secret, so a missing-key error can say what to set.
    package var configKey: String {
        switch self {
        case .unsplash: return "[providers.unsplash] access_key"
        case .flickr: return "[providers.flickr] api_key"
        case .pixabay: return "[providers.pixabay] api_key"
        }
    }

    /// The environment variable that overrides the file (see cache.conf at the repository root).
    package var environmentVariable: String {
        switch self {
        case .unsplash: return "UNSPLASH_ACCESS_KEY"
        case .flickr: return "FLICKR_API_KEY"
        case .pixabay: return "PIXABAY_API_KEY"
        }
    }
}
