import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache download`: saves full-size images to disk through the daemon's jobs.
public struct DownloadCommand: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Save full-size photos to a folder, with one progress bar per file.",
        discussion: """
        Starts one daemon job per photo or URL and follows them: bytes, rate and ETA per \
        file, then a summary. The folder must lie inside one of the daemon's download_dir \
        roots (else exit 19, forbidden); an existing file is never replaced (name (1).jpg). \
        Ctrl-C cancels the jobs (their partial files are removed). With --detach the command \
        prints the job ids and returns at once: the jobs go on in the daemon.

        EXAMPLES
          imagecache download unsplash:Dwu85P9SOIk
          imagecache download pixabay:195893 flickr:4321368 -o ~/Pictures --variant regular
          imagecache download unsplash:Dwu85P9SOIk --detach
        """)

    @OptionGroup public var global: GlobalOptions

    @Argument(help: ArgumentHelp("Photo ids (provider:id) or image URLs.", valueName: "photo|url"))
    public var images: [String] = []

    /// `-o DIR`, made absolute by `params(currentDirectory:)`.
    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp(
        "Folder to save into, inside a download root (default: the first root).", valueName: "dir"))
    public var output: String?

    @Option(help: "full (the largest the provider allows) or regular (about 1080 px wide).")
    public var variant: DownloadVariant = .full

    @Flag(help: "Start the jobs and return; do not follow or cancel them.")
    public var detach = false

    public init() {}

    public func validate() throws {
        if images.isEmpty { throw ValidationError("Name at least one photo id or URL.") }
    }

    /// The params for each image; a relative `-o` is made absolute here because the daemon
    /// does not share this process's working directory.
    public func params(currentDirectory: String = FileManager.default.currentDirectoryPath) -> [DownloadParams] {
        let directory = output.map { path -> String in
            let expanded = NSString(string: path).expandingTildeInPath
            return expanded.hasPrefix("/") ? expanded : URL(fileURLWithPath: expanded, relativeTo: URL(fileURLWithPath: currentDirectory, isDirectory: true)).standardizedFileURL.path
        }
        return images.map { DownloadParams(image: imageReference($0), variant: variant, directory: directory) }
    }

    public func run(connection: ImageCacheConnection) async throws {
        let notifications = connection.notifications()
        var jobs: [(label: String, job: String)] = []
        for (label, params) in zip(images, params()) {
            let started = try await connection.download(params)
            jobs.append((label, started.job))
        }
        if detach {
            if global.json {
                Output.line(try JSONOutput.text(jobs.map { DownloadResult(job: $0.job) }))
            } else {
                for job in jobs { Output.line("\(job.label): job \(job.job) started (the daemon carries on; the file appears in the folder when done)") }
            }
            return
        }
        let follower = DownloadFollower(jobs: jobs, terminal: global.json ? Terminal(isTTY: false, width: 100) : Terminal.current(), quiet: global.json)
        let outcomes: [DownloadOutcome]
        do {
            outcomes = try await Interrupts.race { try await follower.follow(notifications) }
        } catch is Interrupted {
            var cancelled = 0
            for job in jobs where (try? await connection.cancelDownload(job: job.job))?.cancelled == true { cancelled += 1 }
            Output.error("imagecache: interrupted; cancelled \(cancelled) unfinished job\(cancelled == 1 ? "" : "s") (partial files removed)")
            throw ExitCode(ExitStatus.interrupted.rawValue)
        }
        if global.json {
            Output.line(try JSONOutput.text(outcomes))
        } else {
            Output.line(DownloadSummary.render(outcomes))
        }
        if let failure = outcomes.compactMap(\.error).first {
            throw ExitCode(ExitStatus(kind: failure.kind).rawValue)
        }
    }
}

/// How one download ended.
public struct DownloadOutcome: Codable, Sendable, Equatable {
    /// The photo id or URL as given.
    public var image: String
    /// The daemon's job id.
    public var job: String
    /// The saved file, when finished.
    public var path: String?
    /// Its size.
    public var bytes: Int?
    /// Its pixel size.
    public var width: Int?
    /// See `width`.
    public var height: Int?
    /// Why it failed.
    public var error: RPCError?
    /// Seconds from start to end as this client saw them.
    public var seconds: Double

    public init(image: String, job: String, path: String? = nil, bytes: Int? = nil, width: Int? = nil,
                height: Int? = nil, error: RPCError? = nil, seconds: Double) {
        self.image = image
        self.job = job
        self.path = path
        self.bytes = bytes
        self.width = width
        self.height = height
        self.error = error
        self.seconds = seconds
    }
}

/// Follows download jobs' notifications to their ends, drawing their bars.
struct DownloadFollower: Sendable {
    let jobs: [(label: String, job: String)]
    let terminal: Terminal
    let quiet: Bool

    func follow(_ notifications: AsyncStream<ServerNotification>) async throws -> [DownloadOutcome] {
        var board = ProgressBoard(terminal: terminal)
        let start = MonotonicClock.now()
        var index: [String: Int] = [:]
        var outcomes: [String: DownloadOutcome] = [:]
        for job in jobs {
            let added = board.add(ProgressItem(label: job.label), now: start)
            index[job.job] = added.index
            if !quiet { Output.out(added.output) }
        }
        let labels = Dictionary(jobs.map { ($0.job, $0.label) }, uniquingKeysWith: { first, _ in first })
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
                outcomes[f.job] = DownloadOutcome(image: labels[f.job] ?? f.job, job: f.job, path: f.path, bytes: f.bytes,
                                                  width: f.width, height: f.height, seconds: now - start)
                text = board.update(i, now: now) { item in
                    item.received = f.bytes
                    item.total = f.bytes
                    item.elapsed = now - start
                    item.outcome = "done"
                }
            case .downloadFailed(let f):
                guard let i = index[f.job], outcomes[f.job] == nil else { continue }
                outcomes[f.job] = DownloadOutcome(image: labels[f.job] ?? f.job, job: f.job, error: f.error, seconds: now - start)
                text = board.update(i, now: now) { item in
                    item.elapsed = now - start
                    item.outcome = "failed: \(f.error.kind.rawValue)"
                }
            default:
                continue
            }
            if !quiet { Output.out(text) }
            if outcomes.count == jobs.count { break }
        }
        guard outcomes.count == jobs.count else {
            throw ImageCacheClientError.connectionClosed(socketPath: "", reason: "the daemon closed the connection while downloads ran")
        }
        return jobs.compactMap { outcomes[$0.job] }
    }
}

/// The summary after `download`.
public enum DownloadSummary {
    /// One line per file, then the totals.
    public static func render(_ outcomes: [DownloadOutcome]) -> String {
        var lines: [String] = []
        for o in outcomes {
            if let path = o.path {
                lines.append("saved   \(path) (\(o.width ?? 0)×\(o.height ?? 0), \(Units.bytes(o.bytes ?? 0)))")
            } else if let error = o.error {
                lines.append("failed  \(o.image): \(error.message) [\(error.kind.rawValue)]")
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
