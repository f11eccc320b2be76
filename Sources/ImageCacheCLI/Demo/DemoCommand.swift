import ArgumentParser
import DaemonChild
import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache demo`: the whole story offline, against a real daemon.
public struct DemoCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run an offline demo: a provider simulator, a real imagecached, every feature.",
        discussion: """
        Starts the provider simulator on 127.0.0.1 (imagecache-simulator: the provider APIs, \
        and an image host paced like a distant CDN), starts the imagecached found next to this \
        imagecache with a \
        temporary config, cache and socket, then runs each step and prints what the daemon \
        answered: hello; a search with pagination; visible thumbnails fetched with progress \
        while recycled ones are cancelled, with the byte counts that prove it; a masonry \
        layout from the photos' dimensions (an SVG is written); the same search answered from the \
        cache; a full-size download to a folder; the stats. A step whose method the daemon \
        does not implement says "not in this build" (an older imagecached).

        Everything is removed at the end (processes, socket, temp files), also on failure and \
        on Ctrl-C; only the SVG is kept. Exits 1 if any step failed.

        EXAMPLES
          imagecache demo
          imagecache demo --svg /tmp/grid.svg --daemon .build/release/imagecached
          imagecache demo --keep-running   # then try commands on its socket
          imagecache demo --gallery        # the web gallery, until Ctrl-C

        With --gallery the steps are skipped: the simulator and the daemon start, then the web \
        gallery of `imagecache gallery` serves them (its URL printed and opened) until Ctrl-C.
        """)

    @Option(help: ArgumentHelp("The imagecached to run (default: the one next to this imagecache).", valueName: "path"))
    public var daemon: String?

    @Option(help: ArgumentHelp("Where to write the layout's SVG.", valueName: "file"), completion: .file())
    public var svg: String = "imagecache-demo.svg"

    @Option(help: "Seconds to wait for the simulator, then the daemon, to be ready after starting each.")
    public var startTimeout: Double = 30

    /// `--keep-running`: a sandbox to try commands in, ended by Ctrl-C.
    @Flag(help: "After the steps, keep the simulator and daemon up (printing the socket) until Ctrl-C.")
    public var keepRunning = false

    /// `--gallery`: the web gallery against the sandbox, instead of the steps.
    @Flag(help: "Skip the steps: serve the web gallery (imagecache gallery) on the sandbox daemon until Ctrl-C.")
    public var gallery = false

    /// The gallery's port and browser choice, with `--gallery`.
    @OptionGroup public var galleryOptions: GalleryOptions

    /// `--json` prints a report of the steps on stdout, the narrative going to stderr;
    /// `--socket` is not used (the demo's daemon has its own, in the temporary folder).
    @OptionGroup public var global: GlobalOptions

    public init() {}

    public func run() async throws {
        guard let executable = daemon ?? DaemonProcess.locate() else {
            Output.error("imagecache: no imagecached next to this imagecache (\(CommandLine.arguments[0])); build it with `swift build` or pass --daemon PATH")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        let svgPath = svg.hasPrefix("/") ? svg : FileManager.default.currentDirectoryPath + "/" + svg
        let resources = DemoResources()
        if gallery {
            try await runGallery(executable: executable, resources: resources)
            return
        }
        let report: [DemoReport.Step]
        do {
            report = try await Output.$narrativeToStderr.withValue(global.json) {
                try await Interrupts.race { [startTimeout] in
                    try await Self.story(executable: executable, svgPath: svgPath, startTimeout: startTimeout, resources: resources)
                }
            }
        } catch {
            await Output.$narrativeToStderr.withValue(global.json) { _ = await resources.release(verbose: true) }
            if error is Interrupted {
                Output.error("imagecache: demo interrupted; daemon stopped and temporary files removed")
                throw ExitCode(ExitStatus.interrupted.rawValue)
            }
            Output.error("demo failed: \(error)")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        if keepRunning, let socket = await resources.socketPath {
            Output.narrate("==> imagecached stays up for you to try, for example:")
            Output.narrate("    imagecache --socket \(socket) search red fox --page 2")
            Output.narrate("    Ctrl-C stops it and removes everything")
            // Ctrl-C is how this ends, not a failure: the steps' outcome decides the status.
            _ = try? await Interrupts.race { () async -> Int in
                // A stream nothing is ever sent on: its loop ends only when the race cancels it.
                let (never, feed) = AsyncStream.makeStream(of: Int.self)
                for await _ in never {}
                withExtendedLifetime(feed) {}
                return 0
            }
        }
        let clean = await Output.$narrativeToStderr.withValue(global.json) { await resources.release(verbose: true) }
        let failed = report.filter { $0.outcome == "failed" }.count
        if global.json { Output.line(try JSONOutput.text(DemoReport(steps: report, daemonStoppedCleanly: clean))) }
        if failed > 0 || !clean {
            Output.error("demo: \(failed) step\(failed == 1 ? "" : "s") failed\(clean ? "" : "; the daemon did not stop cleanly")")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
    }

    /// `--gallery`: the sandbox, then the gallery on it until Ctrl-C; everything removed after.
    func runGallery(executable: String, resources: DemoResources) async throws {
        do {
            try await Interrupts.race { [startTimeout, galleryOptions] in
                let sandbox = try await Self.startSandbox(executable: executable, startTimeout: startTimeout, resources: resources)
                try await GalleryLauncher.serve(socketPath: sandbox.socket, options: galleryOptions, json: false)
            }
        } catch is Interrupted {
            // Ctrl-C is how the gallery ends.
        } catch {
            await resources.release(verbose: true)
            Output.error("demo failed: \(error)")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        if !(await resources.release(verbose: true)) { throw ExitCode(ExitStatus.failure.rawValue) }
    }

    /// The simulator and a daemon on a temporary config, cache and socket (no steps run).
    static func startSandbox(executable: String, startTimeout: Double, resources: DemoResources) async throws -> DemoConfig.Paths {
        var template = Array("/tmp/imagecache-demo-XXXXXX".utf8CString)
        guard let dir = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            throw DemoFailure("cannot create a temporary folder: \(String(cString: strerror(errno)))")
        }
        await resources.setWorkspace(dir)

        announce("start the provider simulator on 127.0.0.1")
        let simulator = try await DemoSimulator.start(timeout: startTimeout)
        await resources.setSimulator(simulator)
        Output.narrate("    provider APIs at \(simulator.baseURL), images at \(simulator.imagesURL) (paced like a distant CDN)")

        announce("start imagecached with a temporary config")
        let paths = DemoConfig.Paths(workspace: dir)
        try FileManager.default.createDirectory(atPath: paths.downloads, withIntermediateDirectories: true)
        try DemoConfig.text(paths: paths, simulatorURL: simulator.baseURL).write(toFile: paths.config, atomically: true, encoding: .utf8)
        let process = try DaemonProcess(executable: executable, configPath: paths.config, socketPath: paths.socket, logPath: paths.log)
        await resources.setDaemon(process)
        let connection = try await process.waitUntilReady(timeout: startTimeout)
        await resources.setConnection(connection)
        Output.narrate("    \(executable) (pid \(process.pid)) answers on \(paths.socket)")
        return paths
    }

    /// Sets up, runs every step, and returns how each ended.
    static func story(executable: String, svgPath: String, startTimeout: Double, resources: DemoResources) async throws -> [DemoReport.Step] {
        let paths = try await startSandbox(executable: executable, startTimeout: startTimeout, resources: resources)
        guard let connection = await resources.connection else { throw DemoFailure("the daemon's session is gone") }
        let dir = paths.workspace

        let context = DemoContext(connection: connection, workspace: dir, downloads: paths.downloads, svgPath: svgPath,
                                  width: Terminal.current().width, state: DemoState())
        var report: [DemoReport.Step] = []
        for (number, step) in DemoScript.steps.enumerated() {
            announce("\(number + 1)/\(DemoScript.steps.count) \(step.title)")
            let outcome = await step.execute(in: context)
            switch outcome {
            case .passed(let text): Output.narrate(indent(text))
            case .skipped(let reason): Output.narrate("    skipped: \(reason)")
            case .failed(let message): Output.narrate("    FAILED: \(message)")
            }
            report.append(DemoReport.Step(title: step.title, outcome: outcome))
        }
        return report
    }

    static func announce(_ title: String) { Output.narrate("==> \(title)") }

    static func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
    }
}

/// Everything the demo started, released in reverse order whatever happened.
actor DemoResources {
    private var workspace: String?
    private var simulator: DemoSimulator?
    private var daemon: DaemonProcess?
    private(set) var connection: ImageCacheConnection?

    func setWorkspace(_ path: String) { workspace = path }
    func setSimulator(_ servers: DemoSimulator) { simulator = servers }
    func setDaemon(_ process: DaemonProcess) { daemon = process }
    func setConnection(_ connection: ImageCacheConnection) { self.connection = connection }

    /// The demo daemon's socket while it runs.
    var socketPath: String? { daemon?.socketPath }

    /// Closes the session, stops the daemon (SIGTERM, its exit status checked), stops the
    /// simulator process and removes the workspace. Returns false when the daemon did not exit 0.
    @discardableResult
    func release(verbose: Bool) async -> Bool {
        var clean = true
        if let connection { await connection.close() }
        connection = nil
        if let daemon {
            if verbose { DemoCommand.announce("stop imagecached (SIGTERM)") }
            let status = await daemon.stop()
            if status == 0 {
                if verbose { Output.narrate("    exited with status 0") }
            } else {
                clean = false
                Output.narrate("    FAILED: imagecached exited with \(status.map { "status \($0)" } ?? "no status: killed after a timeout")\n\(daemon.logTail())")
            }
        }
        daemon = nil
        // The simulator is the demo's stand-in for the network, not what it shows: its stop is
        // quiet unless it failed.
        if let simulator, !(await simulator.shutdown()) {
            Output.narrate("    \(DemoSimulator.program) did not exit cleanly on SIGTERM:\n\(simulator.process.logTail())")
        }
        simulator = nil
        if let workspace {
            try? FileManager.default.removeItem(atPath: workspace)
            if verbose { Output.narrate("    removed \(workspace)") }
        }
        workspace = nil
        return clean
    }
}

/// `imagecache demo --json`'s report.
public struct DemoReport: Codable, Sendable {
    /// One step's title and how it ended.
    public struct Step: Codable, Sendable, Equatable {
        /// The step's title as printed.
        public var title: String
        /// `passed`, `skipped` or `failed`.
        public var outcome: String
        /// What it printed, the skip reason or the failure.
        public var detail: String

        public init(title: String, outcome: DemoOutcome) {
            self.title = title
            switch outcome {
            case .passed(let text): self.outcome = "passed"; detail = text
            case .skipped(let reason): self.outcome = "skipped"; detail = reason
            case .failed(let message): self.outcome = "failed"; detail = message
            }
        }
    }
    /// The steps in order.
    public var steps: [Step]
    /// Whether imagecached exited 0 on SIGTERM.
    public var daemonStoppedCleanly: Bool
}
