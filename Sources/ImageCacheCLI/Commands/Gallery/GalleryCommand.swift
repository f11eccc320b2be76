import ArgumentParser
import Foundation
import ImageCacheClient

/// `imagecache gallery`: the web gallery on the daemon, in the user's browser.
public struct GalleryCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "gallery",
        abstract: "Serve a photo-grid web page on 127.0.0.1 that talks to the daemon, and open it.",
        discussion: """
        Starts a small web server on 127.0.0.1 (never another interface), prints its URL and \
        opens it with xdg-open (unless --no-open, or xdg-open is not installed). The page \
        searches as you type, lays photos out in columns, loads only the thumbnails on \
        screen and cancels those scrolled away, pages to the last result, opens a photo large \
        with its author, likes and description, and saves the full-size image. Each browser \
        tab is one daemon session, carried over a WebSocket.

        The URL contains a random token: only someone who has it can use the page, and \
        requests naming another Host or coming from another site's page are refused (403). \
        Images are served only if the daemon delivered them to this gallery. Ctrl-C stops it.

        EXAMPLES
          imagecache gallery
          imagecache gallery --port 8099 --no-open
          imagecache demo --gallery           # the same on the offline simulator
        """)

    @OptionGroup public var global: GlobalOptions
    @OptionGroup public var options: GalleryOptions

    public init() {}

    public func run() async throws {
        let path = global.socketPath()
        do {
            // Fail early, with the usual message, when no daemon answers.
            let connection = try await ImageCacheConnection.connect(to: path)
            _ = try await connection.hello()
            await connection.close()
            try await Interrupts.race { [options, global] in
                try await GalleryLauncher.serve(socketPath: path, options: options, json: global.json)
            }
        } catch is Interrupted {
            return
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw CommandFailure.report(error, global: global)
        }
    }
}

/// `--port` and `--no-open`, shared by `gallery` and `demo --gallery`.
public struct GalleryOptions: ParsableArguments, Sendable {
    /// `--port`: 0 picks a free one.
    @Option(help: ArgumentHelp("The TCP port on 127.0.0.1 (default: a free one).", valueName: "n"))
    public var port: Int = 0

    /// `--no-open`: print the URL only.
    @Flag(help: "Print the URL without opening a browser.")
    public var noOpen = false

    public init() {}

    /// A port is 0…65535 (0: the kernel picks a free one).
    public func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
    }
}
