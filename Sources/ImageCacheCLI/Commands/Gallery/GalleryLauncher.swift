import Foundation
import ImageCacheGallery
import ImageCacheSupport

/// Starts the gallery on a socket, prints its URL, opens the browser, and serves until the
/// task is cancelled (Ctrl-C, through `Interrupts.race`).
enum GalleryLauncher {
    /// What `--json` prints once the gallery listens.
    struct Started: Codable {
        var url: String
        var port: Int
        var socket: String
    }

    static func serve(socketPath: String, options: GalleryOptions, json: Bool) async throws {
        let server = try await GalleryServer.start(.init(socketPath: socketPath, port: options.port))
        if json {
            Output.line(try JSONOutput.text(Started(url: server.url, port: server.port, socket: socketPath)))
        } else {
            Output.line("imagecache gallery: \(server.url)")
            Output.line("    (the token in the URL is the key; Ctrl-C stops the gallery)")
        }
        if !options.noOpen {
            if let opener = BrowserOpener.locate() {
                BrowserOpener.open(server.url, with: opener)
            } else {
                Output.line("    no xdg-open here: open the URL in a browser")
            }
        }
        await server.runUntilCancelled()
        await server.shutdown()
    }
}

/// `xdg-open`, found on `PATH` and started without waiting for it.
enum BrowserOpener {
    static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        for folder in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = String(folder) + "/xdg-open"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    static func open(_ url: String, with opener: String) {
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        do {
            // Not waited for; its waiter thread reaps it, so no zombie is left behind.
            _ = try ChildProcess(opener, arguments: [url], environment: environment, stdout: .discard)
        } catch {
            Output.line("    could not start xdg-open (\(error)): open the URL in a browser")
        }
    }
}
