import ArgumentParser
import ImageCacheClient

/// `imagecache`: the companion CLI of imagecached.
struct ImageCacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagecache",
        abstract: "Search, show, prefetch, lay out and download photos through the imagecached daemon.",
        version: "0.1.0"
    )
}

ImageCacheCommand.main()
