import ImageCacheProtocol

/// Download jobs as `download list` and `download status` print them.
public enum DownloadJobTable {
    /// One row per job: id, state, progress, image, then the saved path or the error,
    /// each line cut to `width` columns. The last column is what a reader came for, so on
    /// a narrow terminal the image column gives way to it: a path keeps its file name and
    /// the folders before it (`…/Downloads/fox.jpg`), an error its beginning.
    public static func render(_ jobs: [DownloadJob], width: Int) -> String {
        guard !jobs.isEmpty else { return "no download jobs (finished and failed ones stay listed for 24 h)" }
        let idWidth = max(JobID.width, jobs.map { DisplayWidth.of($0.job) }.max() ?? 0)
        let progressWidth = max(8, jobs.map { DisplayWidth.of(progress($0)) }.max() ?? 0)
        let fixed = idWidth + 2 + 9 + 2 + progressWidth + 2
        let wantedImage = min(40, max(5, jobs.map { DisplayWidth.of(image($0)) }.max() ?? 0))
        let wantedDetail = max(DisplayWidth.of("PATH / ERROR"), jobs.map { DisplayWidth.of(detail($0).text) }.max() ?? 0)
        // What is left after the fixed columns is shared: the detail first gets up to 3/5
        // (at least 24 columns where there are), the image the rest (at least 5).
        let spare = width - fixed - 2
        var imageWidth = wantedImage
        if imageWidth + wantedDetail > spare {
            let detailShare = min(wantedDetail, max(24, spare * 3 / 5))
            imageWidth = max(5, min(wantedImage, spare - detailShare))
        }
        func row(_ cells: [String], detailIsPath: Bool) -> String {
            let line = DisplayWidth.pad(cells[0], to: idWidth) + "  " + DisplayWidth.pad(cells[1], to: 9) + "  "
                + DisplayWidth.pad(cells[2], to: progressWidth, alignRight: true) + "  " + DisplayWidth.pad(cells[3], to: imageWidth)
                + "  "
            let room = width - DisplayWidth.of(line)
            let last = detailIsPath ? DisplayWidth.truncatePath(cells[4], to: room) : DisplayWidth.truncate(cells[4], to: room)
            return SearchTable.trimTrailing(line + last)
        }
        var lines = [row(["JOB", "STATE", "PROGRESS", "IMAGE", "PATH / ERROR"], detailIsPath: false)]
        for job in jobs {
            let last = detail(job)
            lines.append(row([job.job, job.state.rawValue, progress(job), image(job), last.text], detailIsPath: last.isPath))
        }
        return lines.joined(separator: "\n")
    }

    /// A job in a few lines, for `download status`.
    public static func describe(_ job: DownloadJob) -> String {
        var lines = ["job       \(job.job)",
                     "image     \(image(job)) (\(job.variant.rawValue))",
                     "state     \(job.state.rawValue)",
                     "progress  \(progress(job))"]
        if let path = job.path {
            // A failed or cancelled job's reserved name was removed with its partial file:
            // only the folder it was going to is real.
            lines.append(job.state == .failed || job.state == .cancelled
                         ? "folder    \(folder(of: path)) (not saved)" : "path      \(path)")
        }
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

    /// The error; else the saved (or reserved) path; else, for a job that ended without its
    /// file, the folder it was going to, labelled so (never a path that does not exist).
    static func detail(_ job: DownloadJob) -> (text: String, isPath: Bool) {
        if let error = job.error { return ("\(error.kind.rawValue): \(error.message)", false) }
        guard let path = job.path else { return ("", false) }
        if job.state == .failed || job.state == .cancelled { return ("not saved, folder " + folder(of: path), false) }
        return (path, true)
    }

    /// The folder part of a path (`/` for a top-level name).
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
