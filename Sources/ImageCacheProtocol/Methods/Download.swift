extension Methods {
    /// `download`: saves a full-size image into a download root; answers `{job}` at once.
    public enum Download: RPCMethod {
        public typealias Params = DownloadParams
        public typealias Result = DownloadResult
        public static let name = MethodName.download
    }

    /// `download.status`: one job's state now.
    public enum DownloadStatus: RPCMethod {
        public typealias Params = DownloadJobParams
        public typealias Result = DownloadJob
        public static let name = MethodName.downloadStatus
    }

    /// `download.list`: every job the daemon knows (unfinished ones, and those that
    /// finished or failed within the last 24 h).
    public enum DownloadList: RPCMethod {
        public typealias Params = NoParams
        public typealias Result = DownloadListResult
        public static let name = MethodName.downloadList
    }

    /// `download.cancel`: stops a job and removes its `.part` file and reserved name.
    public enum DownloadCancel: RPCMethod {
        public typealias Params = DownloadJobParams
        public typealias Result = CancelledResult
        public static let name = MethodName.downloadCancel
    }

    /// `download.watch`: subscribes this session to a job's notifications and answers its
    /// state now, so a watcher that attaches late misses nothing.
    public enum DownloadWatch: RPCMethod {
        public typealias Params = DownloadJobParams
        public typealias Result = DownloadJob
        public static let name = MethodName.downloadWatch
    }
}

/// Which size of the photo to save.
public enum DownloadVariant: String, ParamEnum {
    /// The largest the provider lets this key fetch.
    case full
    /// About 1080 px wide.
    case regular
}

/// Params of `download`.
public struct DownloadParams: RPCParams, Hashable {
    /// The photo (by id) or image URL to save.
    public var image: ImageReference
    /// Which size to save.
    public var variant: DownloadVariant
    /// An absolute folder inside a download root (else 1010); nil means the first root.
    public var directory: String?
    /// The file name (sanitised by the daemon); nil means one from the photo id or URL.
    public var filename: String?
    /// Replace an existing file instead of picking `name (1).jpg`.
    public var overwrite: Bool

    public init(image: ImageReference, variant: DownloadVariant = .full, directory: String? = nil,
                filename: String? = nil, overwrite: Bool = false) {
        self.image = image
        self.variant = variant
        self.directory = directory
        self.filename = filename
        self.overwrite = overwrite
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case photo, url, variant, directory, filename, overwrite }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        image = try ImageReference.decode(from: c, photoKey: .photo, urlKey: .url)
        variant = try c.decodeIfPresent(DownloadVariant.self, forKey: .variant) ?? .full
        directory = try c.decodeIfPresent(String.self, forKey: .directory)
        filename = try c.decodeIfPresent(String.self, forKey: .filename)
        overwrite = try c.decodeIfPresent(Bool.self, forKey: .overwrite) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try image.encode(to: &c, photoKey: .photo, urlKey: .url, nullOther: false)
        try c.encode(variant, forKey: .variant)
        try c.encodeIfPresent(directory, forKey: .directory)
        try c.encodeIfPresent(filename, forKey: .filename)
        try c.encode(overwrite, forKey: .overwrite)
    }

    public func validate() throws(RPCError) {
        try FieldCheck.reference(image)
        if let directory, !directory.hasPrefix("/") {
            throw .invalidParam("directory", "'directory' must be an absolute path (the daemon does not share the client's working directory)")
        }
        if let filename, filename.isEmpty { throw .invalidParam("filename", "'filename' must not be empty") }
    }
}

/// The answer to `download`.
public struct DownloadResult: Codable, Sendable, Hashable {
    /// The job's id, for `download.status`/`cancel`/`watch` and in its notifications.
    public var job: String
    public init(job: String) {
        self.job = job
    }
}

/// Params of `download.status`, `download.cancel` and `download.watch`.
public struct DownloadJobParams: RPCParams, Hashable {
    /// The job id `download` answered.
    public var job: String

    public init(job: String) {
        self.job = job
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case job }

    public func validate() throws(RPCError) {
        if job.isEmpty { throw .invalidParam("job", "'job' must not be empty") }
    }
}

/// Where a download job is in its life.
public enum DownloadState: String, ParamEnum {
    /// Waiting for a transfer slot (or for the daemon to resume it after a restart).
    case queued
    /// Bytes are flowing.
    case running
    /// Saved at `path`, verified to decode.
    case finished
    /// Stopped with `error`; nothing is left at `path`.
    case failed
    /// Cancelled by `download.cancel`; nothing is left at `path`.
    case cancelled
}

/// A download job as `download.status`, `download.watch` and `download.list` report it.
public struct DownloadJob: Codable, Sendable, Hashable {
    /// The job id.
    public var job: String
    /// The photo id, or null for a URL download.
    @ExplicitNull public var photo: String?
    /// The image URL being fetched (redacted), null until it is known.
    @ExplicitNull public var url: String?
    /// The size being saved.
    public var variant: DownloadVariant
    /// Where the job is in its life.
    public var state: DownloadState
    /// The reserved final path; null until the job has started.
    @ExplicitNull public var path: String?
    /// Body bytes written so far.
    public var received: Int
    /// The body's length when known.
    @ExplicitNull public var total: Int?
    /// Of the saved image, once finished.
    @ExplicitNull public var width: Int?
    /// See `width`.
    @ExplicitNull public var height: Int?
    /// Why it failed, for `failed`.
    @ExplicitNull public var error: RPCError?
    /// When the job was created, ISO 8601 UTC.
    public var createdAt: String
    /// When it finished, failed or was cancelled, ISO 8601 UTC.
    @ExplicitNull public var endedAt: String?

    public init(job: String, photo: String?, url: String?, variant: DownloadVariant, state: DownloadState,
                path: String?, received: Int, total: Int?, width: Int? = nil, height: Int? = nil,
                error: RPCError? = nil, createdAt: String, endedAt: String? = nil) {
        self.job = job
        self.photo = photo
        self.url = url
        self.variant = variant
        self.state = state
        self.path = path
        self.received = received
        self.total = total
        self.width = width
        self.height = height
        self.error = error
        self.createdAt = createdAt
        self.endedAt = endedAt
    }
}

/// The answer to `download.list`, newest first.
public struct DownloadListResult: Codable, Sendable, Hashable {
    /// The jobs, newest first.
    public var jobs: [DownloadJob]
    public init(jobs: [DownloadJob]) {
        self.jobs = jobs
    }
}

/// `download.progress`: sent to every session that started or watches the job.
public struct DownloadProgress: RPCNotificationPayload, Hashable {
    public static let name = NotificationName.downloadProgress
    /// The job id.
    public var job: String
    /// Body bytes received so far.
    public var received: Int
    /// Null when the server did not say.
    @ExplicitNull public var total: Int?
    /// A moving average over the last seconds.
    public var bytesPerSecond: Double

    public init(job: String, received: Int, total: Int?, bytesPerSecond: Double) {
        self.job = job
        self.received = received
        self.total = total
        self.bytesPerSecond = bytesPerSecond
    }
}

/// `download.finished`: the file is complete at `path`, fsynced and verified to decode.
public struct DownloadFinished: RPCNotificationPayload, Hashable {
    public static let name = NotificationName.downloadFinished
    /// The job id.
    public var job: String
    /// The saved file (final name, complete).
    public var path: String
    /// Its size in bytes.
    public var bytes: Int
    /// Of the saved image, read by decoding it.
    public var width: Int
    /// See `width`.
    public var height: Int

    public init(job: String, path: String, bytes: Int, width: Int, height: Int) {
        self.job = job
        self.path = path
        self.bytes = bytes
        self.width = width
        self.height = height
    }
}

/// `download.failed`: the job stopped; `error` is an error object (docs/protocol.md, "Errors").
public struct DownloadFailed: RPCNotificationPayload, Hashable {
    public static let name = NotificationName.downloadFailed
    /// The job id.
    public var job: String
    /// Why it stopped, an error object as in docs/protocol.md, "Errors".
    public var error: RPCError

    public init(job: String, error: RPCError) {
        self.job = job
        self.error = error
    }
}
