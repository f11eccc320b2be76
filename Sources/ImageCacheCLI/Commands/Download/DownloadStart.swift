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
        roots (else exit 19, forbidden). An existing file is never replaced: by default the \
        new one is saved beside it as 'name (1).jpg'; --overwrite replaces it (--no-overwrite \
        undoes that in an alias). -O NAME chooses the file name; -O DIR/NAME saves into DIR \
        (relative to -o when given, else to the current folder), as curl -o and wget -O do. \
        Ctrl-C cancels the jobs (their partial files are removed). An image the daemon \
        refuses to start (unknown photo id, folder outside the roots, bad name) is reported \
        at once and in the summary ("refused"); the others still start and are followed, and \
        the exit status is the first failure's. With --detach the command prints the job ids \
        (and any refusal) and returns at once: the jobs go on in the daemon; follow them with \
        `download watch`, stop them with `download cancel`.

        EXAMPLES
          imagecache download unsplash:Dwu85P9SOIk
          imagecache download pixabay:195893 flickr:4321368 -o ~/Pictures
          imagecache download unsplash:Dwu85P9SOIk --variant regular -O fox.jpg
          imagecache download unsplash:Dwu85P9SOIk --detach
          imagecache download https://images.example.com/a.jpg -o /srv/photos
        """)

    @OptionGroup public var global: GlobalOptions

    @Argument(help: ArgumentHelp("Photo ids (provider:id) or image URLs.", valueName: "photo|url"))
    public var images: [String] = []

    /// `-o DIR`, made absolute by `params(currentDirectory:)`.
    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp(
        "Folder to save into, inside a download root (default: the first root).", valueName: "dir"), completion: .directory)
    public var output: String?

    @Option(help: "full (the largest the provider allows) or regular (about 1080 px wide).")
    public var variant: DownloadVariant = .full

    @Flag(help: "Start the jobs and return; do not follow or cancel them.")
    public var detach = false

    /// `-O NAME` or `-O DIR/NAME`: the daemon applies its name rules to NAME (protocol.md,
    /// `download`); a folder part is split off here (`destination`), never sent inside the name.
    @Option(name: [.customShort("O"), .customLong("filename")], help: ArgumentHelp(
        "Save as NAME (one image only); DIR/NAME saves into DIR. The daemon cleans or refuses unsafe names.",
        valueName: "name"), completion: .file())
    public var filename: String?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Replace a file of the same name, once the new one is complete and verified (default: save beside it as 'name (1).jpg').",
        discussion: "--no-overwrite undoes an --overwrite given earlier, for example in an alias."))
    public var overwrite = false

    /// `--no-clobber` is read as wget and cp mean it, "skip an existing file"; the daemon's
    /// `download` has no such mode (it saves beside a taken name, or replaces it), so the flag
    /// is refused with what it would do instead rather than silently doing something else.
    @Flag(name: .customLong("no-clobber"), help: ArgumentHelp(visibility: .hidden))
    public var noClobber = false

    public init() {}

    public func validate() throws {
        if images.isEmpty { throw ValidationError("Name at least one photo id or URL.") }
        for image in images { try ImageArgument.check(image) }
        if filename != nil, images.count > 1 { throw ValidationError("--filename names one file: give one image, or leave it out.") }
        if let output { try Self.checkDestination(output) }
        if noClobber {
            throw ValidationError("--no-clobber (skip a file that exists, as wget -nc and cp -n do) is not available: the daemon "
                                  + "cannot skip an existing file. Without --overwrite nothing is ever replaced: the new file is saved "
                                  + "beside it as 'name (1).jpg'.")
        }
        if let filename {
            guard let name = Self.split(filename).name else {
                throw ValidationError("-O \(filename) names a folder, not a file: give DIR/NAME, or the folder with -o DIR.")
            }
            if filename.hasPrefix("/"), output != nil {
                throw ValidationError("-O \(filename) already names its folder: leave out -o, or give -O \(name).")
            }
        }
    }

    /// `-O`'s value as a folder (nil when none was given) and a file name (nil when it ends
    /// with `/`): `a/b.jpg` → (`a`, `b.jpg`), `/srv/p/b.jpg` → (`/srv/p`, `b.jpg`).
    static func split(_ filename: String) -> (folder: String?, name: String?) {
        guard let slash = filename.lastIndex(of: "/") else { return (nil, filename.isEmpty ? nil : filename) }
        let name = String(filename[filename.index(after: slash)...])
        let folder = slash == filename.startIndex ? "/" : String(filename[..<slash])
        return (folder, name.isEmpty ? nil : name)
    }

    /// A destination written like a remote one (`host:/photos`, `user@host:photos`,
    /// `https://…`) is a mistake of cause, not a folder: the daemon writes only into local
    /// folders under its download roots.
    static func checkDestination(_ path: String) throws {
        let lower = path.lowercased()
        let remote = lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("ftp://") || lower.hasPrefix("sftp://")
        var scpLike = false
        if !path.hasPrefix("/"), !path.hasPrefix("~"), !path.hasPrefix("."), let colon = path.firstIndex(of: ":") {
            let host = path[..<colon]
            scpLike = !host.isEmpty && !host.contains("/")
        }
        if remote || scpLike {
            throw ValidationError("-o \(path) looks like a host, not a folder: the daemon saves only into local folders "
                                  + "inside its download_dir roots (copy the file elsewhere afterwards, e.g. with scp).")
        }
    }

    /// The params for each image; a relative `-o` is made absolute here because the daemon
    /// does not share this process's working directory. A folder in `-O` is joined to `-o`
    /// (or, without it, to the current folder, as curl and wget take `-o`/`-O`), so only
    /// the bare name goes to the daemon, which would otherwise turn `a/b.jpg` into `a_b.jpg`.
    public func params(currentDirectory: String = FileManager.default.currentDirectoryPath) -> [DownloadParams] {
        func absolute(_ path: String, from base: String) -> String {
            let expanded = NSString(string: path).expandingTildeInPath
            return expanded.hasPrefix("/") ? expanded
                : URL(fileURLWithPath: expanded, relativeTo: URL(fileURLWithPath: base, isDirectory: true)).standardizedFileURL.path
        }
        var directory = output.map { absolute($0, from: currentDirectory) }
        var name = filename
        if let filename {
            let parts = Self.split(filename)
            name = parts.name
            if let folder = parts.folder { directory = absolute(folder, from: directory ?? currentDirectory) }
        }
        return images.map {
            DownloadParams(image: imageReference($0), variant: variant, directory: directory, filename: name, overwrite: overwrite)
        }
    }

    /// Starts a job per image, in order. A photo the daemon refuses (unknown id, folder outside
    /// the roots…) does not stop the others and is never hidden: each refusal is reported at
    /// once and in the summary, each started job is followed (or, with `--detach`, listed), and
    /// the exit status is the first failure's in argument order. If the
    /// connection itself fails while starting, the jobs already started are named before the
    /// error, with the commands that watch or cancel them.
    public func run(connection: ImageCacheConnection) async throws {
        let notifications = connection.notifications()
        // Ctrl-C may come while jobs are still being started: those already started are
        // recorded here so the interrupt cancels every one of them.
        let started = NIOLockedValueBox<[(index: Int, label: String, job: String)]>([])
        let refused = NIOLockedValueBox<[Int: DownloadOutcome]>([:])
        let terminal = global.jsonOutput ? Terminal(isTTY: false, width: 100) : Terminal.progress()
        let (labels, params, detach, quiet, global) = (images, params(), detach, global.jsonOutput, global)
        let single = labels.count == 1
        let outcomes: [DownloadOutcome]?
        do {
            outcomes = try await Interrupts.race {
                for (index, (label, params)) in zip(labels, params).enumerated() {
                    do {
                        let job = try await connection.download(params).job
                        started.withLockedValue { $0.append((index, label, job)) }
                    } catch let error as RPCError where !single {
                        refused.withLockedValue { $0[index] = DownloadOutcome(image: label, job: nil, error: error, seconds: 0) }
                        if !quiet { Output.error("imagecache: \(label): not started: \(error.message) [\(error.kind.rawValue), \(error.code)]") }
                    } catch {
                        Self.reportStarted(started.withLockedValue { $0.map { ($0.label, $0.job) } }, global: global)
                        throw error
                    }
                }
                if detach { return nil }
                let jobs = started.withLockedValue { $0.map { (label: $0.label, job: $0.job) } }
                let follower = DownloadFollower(jobs: jobs, terminal: terminal, quiet: quiet, socketPath: connection.socketPath,
                                                socketFlag: global.socket)
                return jobs.isEmpty ? [] : try await follower.follow(notifications)
            }
        } catch is Interrupted {
            var cancelled = 0
            for job in started.withLockedValue({ $0 }) where (try? await connection.cancelDownload(job: job.job))?.cancelled == true {
                cancelled += 1
            }
            Output.error("imagecache: interrupted; cancelled \(cancelled) unfinished job\(cancelled == 1 ? "" : "s") (partial files removed)")
            throw ExitCode(ExitStatus.interrupted.rawValue)
        }
        let jobs = started.withLockedValue { $0 }
        let refusals = refused.withLockedValue { $0 }
        // Every image's outcome in argument order: refusals where they were, jobs as followed.
        var ordered: [DownloadOutcome] = []
        var followed = (outcomes ?? []).makeIterator()
        var jobIndex = jobs.makeIterator()
        var nextJob = jobIndex.next()
        for index in labels.indices {
            if let refusal = refusals[index] {
                ordered.append(refusal)
            } else if let job = nextJob, job.index == index {
                if outcomes != nil, let outcome = followed.next() { ordered.append(outcome) }
                nextJob = jobIndex.next()
            }
        }
        guard outcomes != nil else {
            if global.jsonOutput {
                let starts = labels.indices.compactMap { index -> DetachedStart? in
                    if let job = jobs.first(where: { $0.index == index }) { return DetachedStart(job: job.job, image: job.label, error: nil) }
                    return refusals[index].map { DetachedStart(job: nil, image: $0.image, error: $0.error) }
                }
                try JSONOutput.emit(starts, records: starts, global: global)
            } else {
                // The result (stdout) is the job ids, a fixed-width column first so
                // `cut -c1-15` or `awk '{print $1}'` takes them; what to do next is narration.
                for job in jobs { Output.line("\(JobID.padded(job.job))  \(job.label)") }
                if !jobs.isEmpty {
                    let ids = jobs.map(\.job)
                    Output.note("The daemon carries on. Follow with `\(DownloadHints.command("watch", jobs: ids, global: global))`, "
                                + "stop with `\(DownloadHints.command("cancel", jobs: ids, global: global))`.")
                }
            }
            if let failed = ordered.first(where: { $0.error != nil }) { throw ExitCode(failed.exitStatus.rawValue) }
            return
        }
        if global.jsonOutput { try JSONOutput.emit(ordered, records: ordered, global: global) } else { Output.line(DownloadSummary.render(ordered)) }
        if let failed = ordered.first(where: { $0.error != nil }) {
            throw ExitCode(failed.exitStatus.rawValue)
        }
    }

    /// Names the jobs already started when starting the rest failed, so none goes on unseen.
    private static func reportStarted(_ jobs: [(label: String, job: String)], global: GlobalOptions) {
        guard !jobs.isEmpty else { return }
        for job in jobs { Output.error("imagecache: \(job.label): job \(job.job) was started and goes on in the daemon") }
        let ids = jobs.map(\.job)
        Output.error("Follow with `\(DownloadHints.command("watch", jobs: ids, global: global))`, "
                     + "stop with `\(DownloadHints.command("cancel", jobs: ids, global: global))`.")
    }
}

/// One image of `download --detach --json`: its job id once started, or the daemon's error
/// when it refused to start it.
struct DetachedStart: Codable, Sendable {
    /// The daemon's job id; absent when refused.
    var job: String?
    /// The photo id or URL as given.
    var image: String
    /// Why the daemon refused to start it.
    var error: RPCError?
}
