@testable import ImageCacheConfig
@testable import ImageCacheKit

/// `config`: cache.conf's parser (`CacheConfiguration.parse`) on any UTF-8 text, as
/// `ConfigFileReader` hands it over (bytes that are not UTF-8 stop before the parser).
///
/// Every text either parses or throws `ConfigurationError`; never a trap. A configuration
/// that parses prints (`description`) as cache.conf text that parses back to the same
/// configuration, the documented round trip (secrets aside: they print as `<redacted>`).
enum ConfigTarget {
    static let target = FuzzTarget(name: "config", summary: "cache.conf parser, and its description round trip", run: run)

    /// A fixed environment: no secrets from outside, no credentials folder, a made-up home.
    static let environment = ["HOME": "/home/fuzz"]

    static func run(_ bytes: UnsafeRawBufferPointer) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return }
        let parsed: CacheConfiguration
        do {
            parsed = try CacheConfiguration.parse(text: text, path: "fuzz.conf", environment: environment)
        } catch {
            return
        }
        let printed = parsed.description
        var again: CacheConfiguration
        do {
            again = try CacheConfiguration.parse(text: printed, path: "fuzz.conf", environment: environment)
        } catch {
            FuzzCheck.fail("the description of a parsed configuration does not parse: \(error)\n--- input\n\(text)\n--- description\n\(printed)")
        }
        // Keys print as "<redacted>", so they come back as that text: compare the rest.
        again.unsplash.apiKey = parsed.unsplash.apiKey
        again.unsplash.apiKeySource = parsed.unsplash.apiKeySource
        again.flickr.apiKey = parsed.flickr.apiKey
        again.flickr.apiKeySource = parsed.flickr.apiKeySource
        again.pixabay.apiKey = parsed.pixabay.apiKey
        again.pixabay.apiKeySource = parsed.pixabay.apiKeySource
        FuzzCheck.require(again == parsed, "the description parses to another configuration\n--- input\n\(text)\n--- description\n\(printed)\n--- again\n\(again.description)")
    }
}
