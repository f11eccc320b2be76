import ImageCacheProtocol

/// Why a search, or a photo id given to the engine, was refused before any provider was
/// asked: the facts that the server's wire mapping turns into `invalid_params` or
/// `query_too_short` (with `data.field`), `provider_unavailable` or `not_found`.
package enum SearchError: EngineError, Hashable {
    /// A provider name the daemon does not know; `listKnown` adds the known names (a
    /// search's `provider` param, where the client chose the name).
    case unknownProvider(String, listKnown: Bool)
    /// A photo id the daemon never returned.
    case unknownPhoto(id: String)
    /// A photo id without the `provider:` prefix.
    case notAPhotoID(String)
    /// A photo id with an empty provider-side id.
    case noProviderID(String)
    /// A query shorter than 3 characters once trimmed.
    case queryTooShort
    /// Neither a query nor a feed.
    case noQueryOrFeed
    /// Both a query and a feed.
    case queryAndFeed
    /// A page below 1.
    case pageBelowOne
    /// A negative `debounceMs`.
    case negativeDebounce

    public var kind: ErrorKind {
        switch self {
        case .unknownProvider: return .providerUnavailable
        case .unknownPhoto, .notAPhotoID, .noProviderID: return .notFound
        case .queryTooShort: return .queryTooShort
        case .noQueryOrFeed, .queryAndFeed, .pageBelowOne, .negativeDebounce: return .invalidParams
        }
    }

    /// The param at fault, for the refusals of a search's params.
    public var field: String? {
        switch self {
        case .queryTooShort, .noQueryOrFeed: return "query"
        case .queryAndFeed: return "feed"
        case .pageBelowOne: return "page"
        case .negativeDebounce: return "debounceMs"
        case .unknownProvider, .unknownPhoto, .notAPhotoID, .noProviderID: return nil
        }
    }

    /// The message for a person.
    public var description: String {
        switch self {
        case .unknownProvider(let name, let listKnown):
            return "unknown provider '\(name)'" + (listKnown ? " (known: unsplash, flickr, pixabay)" : "")
        case .unknownPhoto(let id): return "unknown photo '\(id)'"
        case .notAPhotoID(let id): return "'\(id)' is not a photo id (expected provider:id)"
        case .noProviderID(let id): return "'\(id)' has no provider id"
        case .queryTooShort: return "the query must have at least 3 characters after trimming"
        case .noQueryOrFeed: return "search needs a query or feed: \"recent\""
        case .queryAndFeed: return "give either a query or a feed, not both"
        case .pageBelowOne: return "page starts at 1"
        case .negativeDebounce: return "debounceMs cannot be negative"
        }
    }
}
