import ImageCacheClient
import ImageCacheProtocol

/// The message a person reads on stderr when a command fails: what happened and, per error
/// kind, what to do about it. The daemon's own message comes first, unchanged.
public enum ErrorMessage {
    /// `imagecache: <what happened>` plus a hint line where one helps.
    public static func render(_ error: any Error) -> String {
        switch error {
        case let rpc as RPCError:
            var text = "imagecache: \(rpc.message) [\(rpc.kind.rawValue), \(rpc.code)]"
            if let hint = hint(rpc) { text += "\n" + hint }
            return text
        case let client as ImageCacheClientError:
            return "imagecache: \(client.description)"
        case let usage as UsageError:
            return "imagecache: \(usage.description)\nSee 'imagecache help' for usage."
        case is CancellationError:
            return "imagecache: interrupted"
        default:
            return "imagecache: \(error)"
        }
    }

    /// `provider_unavailable` has four causes a person fixes differently; the protocol gives
    /// them one code, so the daemon's message (ProviderErrors, SearchCoordinator) tells them
    /// apart: an unknown name, a key the provider refused (it sent an HTTP status), a
    /// malformed `api_url`, or no key at all.
    static func providerHint(_ error: RPCError) -> String {
        let message = error.message.lowercased()
        if message.contains("unknown provider") {
            return "That provider does not exist: use unsplash, flickr or pixabay (--provider NAME); it is not a key problem."
        }
        if error.data.status != nil || message.contains("refused the configured api key") {
            return "The provider answered that the key is wrong or revoked: replace it (the message names the setting), then `systemctl reload imagecached` or restart the daemon."
        }
        if message.contains("api_url") {
            return "Fix api_url in the provider's section of cache.conf (or remove it for the default)."
        }
        return "See which providers have keys with 'imagecache status'; keys go in UNSPLASH_ACCESS_KEY, FLICKR_API_KEY, PIXABAY_API_KEY or cache.conf."
    }

    /// Whether a `not_found` is about a download job (`download status|watch|cancel` with an
    /// id the daemon does not know): its message names the job (`no download job dl-…`),
    /// and the hint then speaks of jobs, not of photo ids.
    static func isAboutJob(_ error: RPCError) -> Bool {
        error.message.contains("download job")
            || error.message.split(whereSeparator: { $0 == " " || $0 == ":" }).contains { JobID.looksLikeJobID(String($0)) }
    }

    /// What to do next for an error kind, when there is something useful to say.
    public static func hint(_ error: RPCError) -> String? {
        switch error.kind {
        case .queryTooShort:
            return "Give at least 3 characters (after trimming spaces)."
        case .providerUnavailable:
            return providerHint(error)
        case .upstreamError:
            var text = "The provider answered an error"
            if let status = error.data.status { text += " (HTTP \(status))" }
            if let body = error.data.body, !body.isEmpty { text += ": " + DisplayWidth.truncate(body, to: 200) }
            return text + "."
        case .rateLimited:
            if let after = error.data.retryAfter { return "Retry in \(Units.duration(after))." }
            return "Retry later: the provider's quota is spent."
        case .networkUnavailable:
            return "The daemon cannot reach the network; cached searches still answer (marked stale)."
        case .notFound:
            if isAboutJob(error) {
                return "See the jobs the daemon knows with `imagecache download list`; a job is forgotten 24 h after it ended."
            }
            return "Photo ids come from a search ('imagecache search …'); the daemon remembers those it returned."
        case .forbidden:
            return "Only allowed hosts are fetched, and downloads go only inside the configured download_dir roots."
        case .busy:
            return "The daemon's queue is full or it is out of file descriptors (see its log); retry in a moment."
        case .methodNotFound:
            return "The daemon does not know this method: it is older than this imagecache. Upgrade imagecached."
        case .cancelled:
            return error.data.reason.map { "Reason: \($0)." }
        case .invalidParams:
            return error.data.field.map { "The daemon refused the parameter '\($0)'." }
        case .internal:
            return "This is a bug in imagecached; its log has the detail."
        case .notAPhoto:
            return "This item is a video: open its page to watch it; only photos are downloaded."
        case .storageUnavailable:
            return "Free space on the cache or download folder, or make it writable again, then retry."
        case .timeout, .decodeFailed, .tooLarge, .parseError, .invalidRequest:
            return nil
        }
    }
}
