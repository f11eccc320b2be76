import Foundation
import ImageCacheConfig

/// What a provider needs to build its requests: where the API lives, the secret, and the
/// application name Unsplash's attribution links carry.
///
/// Kept apart from `CacheConfiguration` so that a SIGHUP can hand providers fresh settings,
/// and so that the key lives in exactly one value that is never printed (see `description`).
public struct ProviderSettings: Sendable, Equatable, CustomStringConvertible {
    /// The API key; nil or empty means the provider is not configured (`provider_unavailable`).
    public var apiKey: String?
    /// The API root (`api_url`), e.g. `https://api.unsplash.com`; tests point it at the simulator.
    package var apiURL: String
    /// `utm_source` of Unsplash attribution links, as its API guidelines require.
    package var appName: String

    public init(apiKey: String?, apiURL: String, appName: String = "imagecached") {
        self.apiKey = apiKey
        self.apiURL = apiURL
        self.appName = appName
    }

    /// The settings of one provider as the configuration has them.
    public init(_ configuration: CacheConfiguration, for provider: ProviderID, appName: String = "imagecached") {
        let section: CacheConfiguration.Provider
        switch provider {
        case .unsplash: section = configuration.unsplash
        case .flickr: section = configuration.flickr
        case .pixabay: section = configuration.pixabay
        }
        self.init(apiKey: section.apiKey, apiURL: section.apiURL, appName: appName)
    }

    /// The key when one is set (non-empty after trimming), else nil.
    package var usableKey: String? {
        guard let key = apiKey?.trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty else { return nil }
        return key
    }

    /// Never shows the key, so logging a settings value cannot leak it.
    public var description: String {
        "ProviderSettings(apiURL: \(URLRedaction.redact(apiURL)), key: \(usableKey == nil ? "unset" : "set"), appName: \(appName))"
    }
}
