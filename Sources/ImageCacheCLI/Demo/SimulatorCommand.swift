import ArgumentParser
import Foundation
import ImageCacheSupport

/// `imagecache simulator`: the demo's provider simulator (`imagecache-simulator`, as a child
/// process) with a daemon config pointing at it, until SIGTERM or Ctrl-C.
///
/// For tests that drive the gallery in a browser (Tests/Browser): they start this, an
/// `imagecached` on the config it writes, and `imagecache gallery`, as three processes, so
/// that stopping this one takes "the network" away from a daemon that keeps running.
/// Hidden from `--help`: it is a test fixture, not a user feature.
public struct SimulatorCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "simulator",
        abstract: "Run the demo's loopback provider simulator alone (for tests).",
        discussion: """
        Starts imagecache-simulator (the provider APIs and the paced image host on free ports \
        of 127.0.0.1, found as `imagecache demo` finds it), writes \
        a daemon config pointing at them into the workspace folder (cache.conf, with the \
        socket, cache and downloads inside that folder), prints one JSON line \
        {api, images, log, config, socket, downloads}, and serves until SIGTERM or Ctrl-C. \
        GET <api>/_log answers every provider request and what the image host served.
        """,
        shouldDisplay: false)

    @Option(help: ArgumentHelp("The folder for the daemon's config, socket, cache and downloads (created).", valueName: "dir"))
    public var workspace: String

    public init() {}

    struct Started: Codable {
        var api: String
        var images: String
        var log: String
        var config: String
        var socket: String
        var downloads: String
    }

    public func run() async throws {
        let paths = DemoConfig.Paths(workspace: workspace)
        try FileManager.default.createDirectory(atPath: paths.downloads, withIntermediateDirectories: true)
        let simulator = try await Interrupts.race { try await DemoSimulator.start(timeout: 60) }
        do {
            try DemoConfig.text(paths: paths, simulatorURL: simulator.baseURL).write(toFile: paths.config, atomically: true, encoding: .utf8)
            let started = Started(api: simulator.baseURL, images: simulator.imagesURL, log: simulator.logURL,
                                  config: paths.config, socket: paths.socket, downloads: paths.downloads)
            Output.line(try SimulatorAnnouncement.line(started))   // one line, for a reading script
        } catch {
            await simulator.shutdown()
            throw error
        }
        // Until SIGTERM or Ctrl-C (the race throws `Interrupted`); the simulator's own end first is a failure.
        if let exited = try? await Interrupts.race({ await simulator.process.exit(within: .infinity) }) {
            Output.error("imagecache: \(DemoSimulator.program) exited with status \(exited):\n\(simulator.process.logTail())")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        guard await simulator.shutdown() else {
            Output.error("imagecache: \(DemoSimulator.program) did not exit cleanly on SIGTERM:\n\(simulator.process.logTail())")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
    }
}
