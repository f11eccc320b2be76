import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheProtocol
import NIOConcurrencyHelpers

/// `imagecache download [start]`: starts one daemon job per image and follows them to their
/// ends (or, with `--detach`, leaves them to the daemon).
public struct DownloadStart: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Save full-size photos to a folder, with one progress bar per file (the default).",
        discussion: """
        Starts one daemon job per photo or URL and follows them: bytes, rate and ETA per \
        file, then a summary. The folder must lie inside one of the daemon's download_dir \
        roots (else exit 19, forbidden); an existing file is never replaced (name (1).jpg). \
        Ctrl-C cancels the jobs (their partial files are removed). With --detach the command \
        prints the job ids and returns at once: the jobs go on in the daemon; follow them \
        with `download watch`, stop them with `download cancel`.

        EXAMPLES
          imagecache download unsplash:Dwu85P9SOIk
          imagecache download pixabay:195893 flickr:4321368 -o ~/Pictures --variant regular
          imagecache download unsplash:Dwu85P9SOIk --detach
          imagecache download start https://images.example.com/a.jpg -o /srv/photos
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
        // Ctrl-C may come while jobs are still being started: those already started are
        // recorded here so the interrupt cancels every one of them.
        let started = NIOLockedValueBox<[(label: String, job: String)]>([])
        let terminal = global.json ? Terminal(isTTY: false, width: 100) : Terminal.current()
        let (labels, params, detach, quiet) = (images, params(), detach, global.json)
        let outcomes: [DownloadOutcome]?
        do {
            outcomes = try await Interrupts.race {
                for (label, params) in zip(labels, params) {
                    let job = try await connection.download(params).job
                    started.withLockedValue { $0.append((label, job)) }
                }
                if detach { return nil }
                let follower = DownloadFollower(jobs: started.withLockedValue { $0 }, terminal: terminal, quiet: quiet)
                return try await follower.follow(notifications)
            }
        } catch is Interrupted {
            var cancelled = 0
            for job in started.withLockedValue({ $0 }) where (try? await connection.cancelDownload(job: job.job))?.cancelled == true {
                cancelled += 1
            }
            Output.error("imagecache: interrupted; cancelled \(cancelled) unfinished job\(cancelled == 1 ? "" : "s") (partial files removed)")
            throw ExitCode(ExitStatus.interrupted.rawValue)
        }
        guard let outcomes else {
            let jobs = started.withLockedValue { $0 }
            if global.json {
                Output.line(try JSONOutput.text(jobs.map { DownloadResult(job: $0.job) }))
            } else {
                for job in jobs { Output.line("\(job.label): job \(job.job) started") }
                let ids = jobs.map(\.job).joined(separator: " ")
                Output.line("The daemon carries on. Follow with `imagecache download watch \(ids)`, stop with `imagecache download cancel \(ids)`.")
            }
            return
        }
        Output.line(global.json ? try JSONOutput.text(outcomes) : DownloadSummary.render(outcomes))
        if let failed = outcomes.first(where: { $0.error != nil }) {
            throw ExitCode(failed.exitStatus.rawValue)
        }
    }
}
