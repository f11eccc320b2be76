import ArgumentParser
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache download status JOB…`: what the daemon knows of each job.
public struct DownloadStatus: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a download job's state, progress, path or error.",
        discussion: """
        Exits 0 whatever the job's state (use `download watch` to wait for its end); 15 \
        (not_found) for an id the daemon does not know, for example one that ended more \
        than 24 h ago.

        EXAMPLES
          imagecache download status dl-3f9a0c41b2e7
          imagecache download status dl-3f9a0c41b2e7 --json | jq -r .state
        """)

    @OptionGroup public var global: GlobalOptions

    @OptionGroup public var ids: JobIDArguments

    public init() {}

    public func run(connection: ImageCacheConnection) async throws {
        var found: [DownloadJob] = []
        for job in ids.jobs { found.append(try await connection.downloadStatus(job: job)) }
        if global.ndjson {
            try JSONOutput.emit(found, records: found, global: global)
        } else if global.json {
            // One job: its object, as the method answers; several: an array of them.
            Output.line(found.count == 1 ? try JSONOutput.text(found[0]) : try JSONOutput.text(found))
        } else {
            Output.line(found.map(DownloadJobTable.describe).joined(separator: "\n\n"))
        }
    }
}

/// `imagecache download list`: every job the daemon keeps.
public struct DownloadList: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the daemon's download jobs (running, and ended within 24 h).",
        discussion: """
        EXAMPLES
          imagecache download list
          imagecache download list --active
          imagecache download list --json |
            jq -r '.jobs[] | select(.state=="failed") | .job'
        """)

    @OptionGroup public var global: GlobalOptions

    @Flag(help: "Only jobs still queued or running.")
    public var active = false

    public init() {}

    public func run(connection: ImageCacheConnection) async throws {
        var result = try await connection.downloads()
        if active { result.jobs = result.jobs.filter { $0.state == .queued || $0.state == .running } }
        if global.jsonOutput {
            try JSONOutput.emit(result, records: result.jobs, global: global)
        } else {
            Output.line(DownloadJobTable.render(result.jobs, width: Terminal.current().tableWidth))
        }
    }
}

/// `imagecache download watch JOB…`: a progress bar per job until each ends.
public struct DownloadWatch: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow download jobs with a progress bar until they end.",
        discussion: """
        For jobs started elsewhere (--detach, another client, before a daemon restart). \
        Ctrl-C stops watching and leaves the jobs running (`download cancel` stops them). \
        Exits like `download`: 0 when every file was saved, else the first failure's kind \
        (16 when cancelled), 15 for an unknown id.

        EXAMPLES
          imagecache download watch dl-3f9a0c41b2e7
          imagecache download watch $(imagecache download list --active \\
            --json | jq -r '.jobs[].job')
        """)

    @OptionGroup public var global: GlobalOptions

    @OptionGroup public var ids: JobIDArguments

    public init() {}

    public func run(connection: ImageCacheConnection) async throws {
        // Listening before asking: a job that ends between the answer and the first
        // notification would otherwise be waited for forever.
        let notifications = connection.notifications()
        var followed: [FollowedJob] = []
        for job in ids.jobs {
            let snapshot = try await connection.watchDownload(job: job)
            followed.append(FollowedJob(label: DownloadJobTable.image(snapshot), job: snapshot.job, snapshot: snapshot))
        }
        // Ctrl-C stops watching, not the jobs: their bars end saying so.
        let follower = DownloadFollower(jobs: followed, terminal: global.jsonOutput ? Terminal(isTTY: false, width: 100) : Terminal.progress(),
                                        quiet: global.jsonOutput, socketPath: connection.socketPath, socketFlag: global.socket,
                                        interruptedOutcome: "still running")
        let outcomes: [DownloadOutcome]
        do {
            outcomes = try await Interrupts.race { try await follower.follow(notifications) }
        } catch is Interrupted {
            let ids = followed.map(\.job)
            Output.error("imagecache: stopped watching; the jobs go on in the daemon "
                         + "(follow again with `\(DownloadHints.command("watch", jobs: ids, global: global))`)")
            throw ExitCode(ExitStatus.interrupted.rawValue)
        }
        if global.jsonOutput { try JSONOutput.emit(outcomes, records: outcomes, global: global) } else { Output.line(DownloadSummary.render(outcomes)) }
        if let failed = outcomes.first(where: { $0.error != nil }) {
            throw ExitCode(failed.exitStatus.rawValue)
        }
    }
}

/// `imagecache download cancel JOB…`: stops jobs and removes their partial files.
public struct DownloadCancel: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel download jobs; their partial files are removed.",
        discussion: """
        A job that already ended is left as it is (its file stays) and reported so; that is \
        not an error. 15 (not_found) for an unknown id.

        EXAMPLES
          imagecache download cancel dl-3f9a0c41b2e7
          imagecache download cancel $(imagecache download list --active \\
            --json | jq -r '.jobs[].job')
        """)

    @OptionGroup public var global: GlobalOptions

    @OptionGroup public var ids: JobIDArguments

    public init() {}

    /// `download cancel --json`'s answer per job.
    public struct Cancelled: Codable, Sendable, Equatable {
        /// The job id.
        public var job: String
        /// False when the job had already ended.
        public var cancelled: Bool
    }

    public func run(connection: ImageCacheConnection) async throws {
        var results: [Cancelled] = []
        for job in ids.jobs {
            let cancelled = try await connection.cancelDownload(job: job).cancelled
            results.append(Cancelled(job: job, cancelled: cancelled))
            guard !global.jsonOutput else { continue }
            if cancelled {
                Output.line("\(job): cancelled (partial file removed)")
            } else {
                let state = (try? await connection.downloadStatus(job: job)).map { " (\($0.state.rawValue))" } ?? ""
                Output.line("\(job): nothing to cancel, the job had already ended\(state)")
            }
        }
        if global.jsonOutput { try JSONOutput.emit(results, records: results, global: global) }
    }
}
