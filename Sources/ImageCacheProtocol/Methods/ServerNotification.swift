/// A notification from the daemon, decoded by its name into its typed payload.
///
/// Clients switch over this instead of over method strings. A name this build does not know
/// (a newer daemon) arrives as `.other`, so an old client keeps working.
public enum ServerNotification: Sendable, Hashable {
    case thumbnailProgress(ThumbnailProgress)
    case thumbnailDimensions(ThumbnailDimensions)
    case prefetchFinished(PrefetchFinished)
    case downloadProgress(DownloadProgress)
    case downloadFinished(DownloadFinished)
    case downloadFailed(DownloadFailed)
    /// A notification this build has no type for, kept as it arrived.
    case other(RPCNotification)

    /// Decodes `notification`'s params by its name; throws when a known name carries params
    /// of the wrong shape (a daemon bug worth reporting rather than hiding).
    public init(_ notification: RPCNotification) throws {
        guard let name = NotificationName(rawValue: notification.method) else {
            self = .other(notification)
            return
        }
        let params = notification.params ?? .object([:])
        switch name {
        case .thumbnailProgress: self = .thumbnailProgress(try params.decode(as: ThumbnailProgress.self))
        case .thumbnailDimensions: self = .thumbnailDimensions(try params.decode(as: ThumbnailDimensions.self))
        case .prefetchFinished: self = .prefetchFinished(try params.decode(as: PrefetchFinished.self))
        case .downloadProgress: self = .downloadProgress(try params.decode(as: DownloadProgress.self))
        case .downloadFinished: self = .downloadFinished(try params.decode(as: DownloadFinished.self))
        case .downloadFailed: self = .downloadFailed(try params.decode(as: DownloadFailed.self))
        }
    }
}

extension RPCNotification {
    /// The notification carrying `payload` under its own name; how the daemon builds every
    /// notification, so name and shape always match.
    public init<Payload: RPCNotificationPayload>(_ payload: Payload) throws {
        self.init(method: Payload.name.rawValue, params: try JSONValue(encoding: payload))
    }
}

extension RPCResponse {
    /// A success answer carrying a typed result, encoded with the contract's field names.
    public init(id: RequestID?, encoding result: some Encodable) throws {
        self.init(id: id, result: try JSONValue(encoding: result))
    }
}
