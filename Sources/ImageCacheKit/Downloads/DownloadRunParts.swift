/// What one job has while it is submitted or running, kept by `DownloadManager` (isolated to
/// it) so that `download.status` reads its live byte count and `download.cancel` stops and
/// cleans it: its folder held open, its progress meter, its transfer, why its verifier
/// refused the body, and the task of its run.
struct DownloadRunParts: Sendable {
    /// The job's folder: checked beneath its root at submit or at the job's (re)start, and
    /// the one every later filesystem step of the job is relative to.
    var folder: DirectoryHandle?
    /// Counts the body's bytes and throttles `download.progress`.
    var meter: DownloadProgressMeter?
    /// The transfer filling the `.part`, while it runs.
    var handle: TransferHandle?
    /// Why the job's verifier refused its body while the transfer still ran (the transfer is
    /// then cancelled, and this is the job's error rather than `cancelled`).
    var refusal: (any Error)?
    /// The run (`DownloadRun.execute`), once started.
    var task: Task<Void, Never>?
}
