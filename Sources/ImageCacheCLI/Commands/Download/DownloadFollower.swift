import ImageCacheClient
import ImageCacheProtocol

/// How one download ended.
public struct DownloadOutcome: Codable, Sendable, Equatable {
    /// The photo id or URL as given.
    public var image: String
    /// The daemon's job id; nil when the daemon refused to start the job (`error` says why).
    public var job: String?
    /// The saved file, when finished.
    public var path: String?
    /// Its size.
    public var bytes: Int?
    /// Its pixel size.
    public var width: Int?
    /// See `width`.
    public var height: Int?
    /// Why it failed (kind `cancelled` when someone cancelled it).
    public var error: RPCError?
    /// Seconds from start to end as this client saw them, rounded to milliseconds
    /// (`Units.milliseconds`): the JSON output says `0.261`, not a float's noise.
    public var seconds: Double

    public init(image: String, job: String?, path: String? = nil, bytes: Int? = nil, width: Int? = nil,
                height: Int? = nil, error: RPCError? = nil, seconds: Double) {
        self.image = image
        self.job = job
        self.path = path
        self.bytes = bytes
        self.width = width
        self.height = height
        self.error = error
        self.seconds = Units.milliseconds(seconds)
    }

    /// The outcome a job's snapshot already records (`download.status`/`download.watch` of
    /// a job that ended before this client looked); nil while it is queued or running.
    public init?(snapshot job: DownloadJob, label: String) {
        switch job.state {
        case .queued, .running:
            return nil
        case .finished:
            self.init(image: label, job: job.job, path: job.path, bytes: job.received, width: job.width, height: job.height, seconds: 0)
        case .failed:
            self.init(image: label, job: job.job, error: job.error ?? RPCError(.internal, "the job failed without an error object"), seconds: 0)
        case .cancelled:
            self.init(image: label, job: job.job, error: job.error ?? RPCError(.cancelled, "the job was cancelled"), seconds: 0)
        }
    }

    /// The exit status this outcome calls for: 0 when saved, else its error kind's.
    public var exitStatus: ExitStatus {
        error.map { ExitStatus(kind: $0.kind) } ?? .success
    }
}

/// A job the follower waits for: the label a person knows it by, its id, and what the
/// daemon last said of it (when `watch` asked) so the bar starts where the job is.
public struct FollowedJob: Sendable {
    /// The photo id or URL as given, or the job's own image for `watch`.
    public var label: String
    /// The daemon's job id.
    public var job: String
    /// The job's state when following began; nil for a job this client just started.
    public var snapshot: DownloadJob?

    public init(label: String, job: String, snapshot: DownloadJob? = nil) {
        self.label = label
        self.job = job
        self.snapshot = snapshot
    }
}

/// Follows download jobs' notifications to their ends, drawing their bars; used by
/// `download`, `download watch` and the demo.
struct DownloadFollower: Sendable {
    let jobs: [FollowedJob]
    let terminal: Terminal
    let quiet: Bool
    /// The socket the notifications come from, named if the connection ends first.
    let socketPath: String
    /// `--socket` as given (nil: none), so the follow-up command printed then asks the
    /// same daemon.
    let socketFlag: String?
    /// The word an unfinished bar ends with when the command is interrupted: `cancelled`
    /// where Ctrl-C cancels the jobs (`download`), something else where it leaves them be.
    let interruptedOutcome: String

    init(jobs: [FollowedJob], terminal: Terminal, quiet: Bool, socketPath: String, socketFlag: String?,
         interruptedOutcome: String = "cancelled") {
        self.jobs = jobs
        self.terminal = terminal
        self.quiet = quiet
        self.socketPath = socketPath
        self.socketFlag = socketFlag
        self.interruptedOutcome = interruptedOutcome
    }

    /// For jobs this client just started: `(label, job id)` pairs.
    init(jobs: [(label: String, job: String)], terminal: Terminal, quiet: Bool, socketPath: String, socketFlag: String?) {
        self.init(jobs: jobs.map { FollowedJob(label: $0.label, job: $0.job) }, terminal: terminal, quiet: quiet,
                  socketPath: socketPath, socketFlag: socketFlag)
    }

    /// Returns every job's outcome, in the order given, once each has finished or failed.
    /// Throws when the connection ends first.
    func follow(_ notifications: AsyncStream<ServerNotification>) async throws -> [DownloadOutcome] {
        var board = ProgressBoard(terminal: terminal)
        let start = MonotonicClock.now()
        var index: [String: Int] = [:]
        var outcomes: [String: DownloadOutcome] = [:]
        for job in jobs {
            var item = ProgressItem(label: job.label)
            if let snapshot = job.snapshot {
                item.received = snapshot.received
                item.total = snapshot.total
                if let ended = DownloadOutcome(snapshot: snapshot, label: job.label) {
                    outcomes[job.job] = ended
                    item.outcome = Self.outcomeText(ended)
                }
            }
            let added = board.add(item, now: start)
            index[job.job] = added.index
            if !quiet { Output.progress(added.output) }
        }
        let labels = Dictionary(jobs.map { ($0.job, $0.label) }, uniquingKeysWith: { first, _ in first })
        if outcomes.count < jobs.count {
            for await note in notifications {
                let now = MonotonicClock.now()
                var text = ""
                switch note {
                case .downloadProgress(let p):
                    guard let i = index[p.job], outcomes[p.job] == nil else { continue }
                    text = board.update(i, now: now) { item in
                        item.received = p.received
                        item.total = p.total
                        item.bytesPerSecond = p.bytesPerSecond
                        item.elapsed = now - start
                    }
                case .downloadFinished(let f):
                    guard let i = index[f.job], outcomes[f.job] == nil else { continue }
                    let outcome = DownloadOutcome(image: labels[f.job] ?? f.job, job: f.job, path: f.path, bytes: f.bytes,
                                                  width: f.width, height: f.height, seconds: now - start)
                    outcomes[f.job] = outcome
                    text = board.update(i, now: now) { item in
                        item.received = f.bytes
                        item.total = f.bytes
                        item.elapsed = now - start
                        item.outcome = Self.outcomeText(outcome)
                    }
                case .downloadFailed(let f):
                    guard let i = index[f.job], outcomes[f.job] == nil else { continue }
                    let outcome = DownloadOutcome(image: labels[f.job] ?? f.job, job: f.job, error: f.error, seconds: now - start)
                    outcomes[f.job] = outcome
                    text = board.update(i, now: now) { item in
                        item.elapsed = now - start
                        item.outcome = Self.outcomeText(outcome)
                    }
                default:
                    continue
                }
                if !quiet { Output.progress(text) }
                if outcomes.count == jobs.count { break }
            }
        }
        guard outcomes.count == jobs.count else {
            let open = jobs.map(\.job).filter { outcomes[$0] == nil }
            if Task.isCancelled {
                // Interrupted (Ctrl-C): every bar still moving gets its last frame, so none is
                // left frozen half-way above the message that follows.
                let now = MonotonicClock.now()
                var text = ""
                for job in open {
                    guard let i = index[job] else { continue }
                    text += board.update(i, now: now) { item in
                        item.elapsed = now - start
                        item.outcome = interruptedOutcome
                    }
                }
                if !quiet { Output.progress(text) }
                throw CancellationError()
            }
            throw FollowedJobsLost(socketPath: socketPath, jobs: open,
                                   statusCommand: DownloadHints.command("status", jobs: open, socket: socketFlag))
        }
        return jobs.compactMap { outcomes[$0.job] }
    }

    /// `done`, `cancelled` or `failed: kind` at the end of a bar.
    static func outcomeText(_ outcome: DownloadOutcome) -> String {
        guard let error = outcome.error else { return "done" }
        return error.kind == .cancelled ? "cancelled" : "failed: \(error.kind.rawValue)"
    }
}

/// The summary after `download` and `download watch`.
public enum DownloadSummary {
    /// One line per file, then the totals.
    public static func render(_ outcomes: [DownloadOutcome]) -> String {
        var lines: [String] = []
        for o in outcomes {
            if let path = o.path {
                lines.append("saved   \(path) (\(o.width ?? 0)×\(o.height ?? 0), \(Units.bytes(o.bytes ?? 0)))")
            } else if let error = o.error {
                let verb = o.job == nil ? "refused" : error.kind == .cancelled ? "cancelled" : "failed "
                lines.append("\(verb) \(o.image): \(error.message) [\(error.kind.rawValue)]")
            }
        }
        let saved = outcomes.filter { $0.path != nil }
        let bytes = saved.reduce(0) { $0 + ($1.bytes ?? 0) }
        let seconds = outcomes.map(\.seconds).max() ?? 0
        lines.append("\(saved.count) of \(outcomes.count) saved, \(Units.bytes(bytes)) in \(Units.duration(seconds))"
                     + (seconds > 0 ? " (\(Units.rate(Double(bytes) / seconds)))" : ""))
        return lines.joined(separator: "\n")
    }
}
