import ArgumentParser
import ImageCacheKit

/// `imagecached`: the daemon's command line.
struct ImageCacheDaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagecached",
        abstract: "Search photo providers, download images and serve a shared thumbnail cache over a Unix socket.",
        version: ImageCacheVersion.current
    )

    func run() throws {
        throw ValidationError("the daemon is not built yet")
    }
}

ImageCacheDaemonCommand.main()
