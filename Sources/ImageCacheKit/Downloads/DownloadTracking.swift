import ImageCacheConfig
import Logging

/// Unsplash's download-tracking request (its API guidelines: once per download the user
/// made), sent after a photo job finished; its failure is logged and changes nothing else.
enum DownloadTracking {
    /// The tracking request for a photo job not yet tracked, nil for anything else.
    static func request(for record: DownloadRecord, photo: ProviderPhoto?, configuration: CacheConfiguration) -> HTTPRequest? {
        guard !record.tracked, let photo, let provider = ProviderID(rawValue: photo.photo.provider) else { return nil }
        let settings = ProviderSettings(configuration, for: provider)
        return try? makePhotoProvider(provider, settings: settings).downloadTrackingRequest(for: photo)
    }

    /// Sends `request` for job `job` in the background.
    static func send(_ request: HTTPRequest, job: String, transfers: TransferEngine, logger: Logger) {
        Task {
            do {
                let response = try await transfers.fetch(request)
                if response.status >= 400 {
                    logger.warning("the download-tracking request failed", metadata: ["job": "\(job)", "status": "\(response.status)"])
                }
            } catch {
                logger.warning("the download-tracking request failed", metadata: ["job": "\(job)", "reason": "\(error)"])
            }
        }
    }
}
