import ImageCacheConfig
import ImageCacheKit

enum CacheConfigurationFixture {
    /// Defaults, with a Flickr key set (a made-up value that must never appear on the wire).
    static func withFlickrKey() -> CacheConfiguration {
        var configuration = CacheConfiguration()
        configuration.flickr.apiKey = "secret-flickr-key"
        return configuration
    }
}
