import ImageCacheProtocol

/// Download jobs as `download list` and `download status` print them.
public enum DownloadJobTable {
    /// One row per job: id, state, progress, image, then the saved path or the error,
    /// each line cut to `width` columns.
    public static func render(_ jobs: [DownloadJob], width: Int) -> String {
        guard !jobs.isEmpty else { return "no download jobs (finished and failed ones stay listed for 24 h)" }
        let idWidth = max(JobID.width, jobs.map { DisplayWidth.of($0.job) }.max() ?? 0)
        let imageWidth = min(40, max(5, jobs.map { DisplayWidth.of(image($0)) }.max() ?? 0))
        let progressWidth = max(8, jobs.map { DisplayWidth.of(progress($0)) }.max() ?? 0)
        func row(_ cells: [String]) -> String {
            let line = DisplayWidth.pad(cells[0], to: idWidth) + "  " + DisplayWidth.pad(cells[1], to: 9) + "  "
                + DisplayWidth.pad(cells[2], to: progressWidth, alignRight: true) + "  " + DisplayWidth.pad(cells[3], to: imageWidth)
                + "  "
            // A long path is cut in its middle: its root and its file name both stay.
            return SearchTable.trimTrailing(line + DisplayWidth.truncateMiddle(cells[4], to: width - DisplayWidth.of(line)))
        }
        var lines = [row(["JOB", "STATE", "PROGRESS", "IMAGE", "PATH / ERROR"])]
        for job in jobs { lines.append(row([job.job, job.state.rawValue, progress(job), image(job), detail(job)])) }
        return lines.joined(separator: "\n")
    }

    /// A job in a few lines, for `download status`.
    public static func describe(_ job: DownloadJob) -> String {
        var lines = ["job       \(job.job)",
                     "image     \(image(job)) (\(job.variant.rawValue))",
                     "state     \(job.state.rawValue)",
                     "progress  \(progress(job))"]
        if let path = job.path { lines.append("path      \(path)") }
        if let width = job.width, let height = job.height { lines.append("pixels    \(width)×\(height)") }
        if let error = job.error { lines.append("error     \(error.message) [\(error.kind.rawValue)]") }
        lines.append("created   \(job.createdAt)")
        if let ended = job.endedAt { lines.append("ended     \(ended)") }
        return lines.joined(separator: "\n")
    }

    /// The photo id, else the URL.
    static func image(_ job: DownloadJob) -> String { job.photo ?? job.url ?? "?" }

    /// `1.2 MiB / 2.7 MiB 45%` while it runs; the size alone once finished or when unknown.
    static func progress(_ job: DownloadJob) -> String {
        guard job.state != .finished, let total = job.total, total > 0 else { return Units.bytes(job.received) }
        let percent = min(100, job.received * 100 / total)
        return "\(Units.bytes(job.received)) / \(Units.bytes(total)) \(percent)%"
    }

    /// The saved (or reserved) path, else the error.
    static func detail(_ job: DownloadJob) -> String {
        if let error = job.error { return "\(error.kind.rawValue): \(error.message)" }
        return job.path ?? ""
    }
}
