import ImageCacheProtocol

/// What a download job tells the sessions that started or watch it: the contract's
/// notifications, ready to send but for a failure, which the server words for the wire.
package enum DownloadEvent: Sendable, Hashable {
    /// Bytes are flowing (throttled by `DownloadProgressMeter`).
    case progress(DownloadProgress)
    /// The file is at its final name, verified, and durable (fsynced, its folder too); the job
    /// table says so a few milliseconds later.
    case finished(DownloadFinished)
    /// The job stopped (an error, or `download.cancel` with `cancelled`); nothing is left.
    case failed(job: String, failure: DownloadFailure)

    /// The job it is about.
    package var job: String {
        switch self {
        case .progress(let p): return p.job
        case .finished(let f): return f.job
        case .failed(let job, _): return job
        }
    }

    /// Whether the job has ended with it (watchers can then be forgotten).
    package var isFinal: Bool {
        if case .progress = self { return false }
        return true
    }
}
