import ArgumentParser
import Foundation

/// `imagecache simulator`: the demo's provider simulator on its own, until SIGTERM or Ctrl-C.
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
        Starts the provider APIs and the paced image host on free ports of 127.0.0.1, writes \
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
        let simulator = try await DemoSimulator.start()
        do {
            try DemoConfig.text(paths: paths, simulatorURL: simulator.baseURL).write(toFile: paths.config, atomically: true, encoding: .utf8)
            let started = Started(api: simulator.baseURL, images: simulator.images.baseURL, log: simulator.baseURL + "/_log",
                                  config: paths.config, socket: paths.socket, downloads: paths.downloads)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            Output.line(String(decoding: try encoder.encode(started), as: UTF8.self))   // one line, for a reading script
            _ = try? await Interrupts.race { () async -> Int in
                let (never, feed) = AsyncStream.makeStream(of: Int.self)
                for await _ in never {}
                withExtendedLifetime(feed) {}
                return 0
            }
        }
        await simulator.shutdown()
    }
}
