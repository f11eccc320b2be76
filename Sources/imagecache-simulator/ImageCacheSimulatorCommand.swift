import ArgumentParser
import Foundation
import ImageCacheProtocol
import ImageCacheSupport

/// `imagecache-simulator`: the provider APIs and the image host of `imagecache demo`, as a
/// program of its own, so that the command line links none of the image libraries the
/// synthetic photos are made with.
@main
struct ImageCacheSimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagecache-simulator",
        abstract: "The offline stand-in for Unsplash, Flickr and Pixabay that `imagecache demo` runs.",
        discussion: """
        Serves the three providers' search APIs and an image host on free ports of 127.0.0.1: \
        the answers are made up, each photo is generated at the size its answer claims and sent \
        at the pace of a distant CDN, so the demo shows progress and cancellation without the \
        network or an API key. Keys it accepts: demo-unsplash-key, demo-flickr-key, \
        demo-pixabay-key.

        Once both servers listen it writes one line of JSON on stdout, \
        {"api": URL, "images": URL, "log": URL}: the APIs' base (/unsplash, \
        /flickr/services/rest, /pixabay/api below it), the image host's, and a URL that \
        answers every request both have seen. It serves until SIGTERM or SIGINT (exit status \
        0), or with --watch-stdin until its stdin ends.

        `imagecache demo` starts it from beside itself, or from ../libexec/imagecached/ \
        relative to itself (where the package installs it).
        """,
        version: ImageCacheVersion.current)

    @Flag(help: "Exit when stdin ends: the parent holds a pipe's other end, so its death, however it dies, ends this too.")
    var watchStdin = false

    func validate() throws {
        if watchStdin, !StdinLifeline.stdinIsPipe {
            throw ValidationError("--watch-stdin needs stdin to be a pipe that the parent holds open while it lives")
        }
    }

    func run() async throws {
        let stop = StopEvents(watchingStdin: watchStdin)
        let servers = try await SimulatorServers.start()
        do {
            // One write of the whole line: stdout is a pipe, and a buffered print could sit unsent.
            try FileHandle.standardOutput.write(contentsOf: Data((try servers.announcement.line() + "\n").utf8))
        } catch {
            await servers.shutdown()
            throw error
        }
        _ = await stop.first()
        await servers.shutdown()
    }
}
