import ArgumentParser
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache cache`: empties parts of the daemon's cache.
public struct CacheCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Clear the daemon's cache or evict one image from it.",
        discussion: """
        Paths already handed out stay readable until their path_grace ends.

        EXAMPLES
          imagecache cache clear thumbnails
          imagecache cache clear all
          imagecache cache evict unsplash:Dwu85P9SOIk
        """,
        subcommands: [Clear.self, Evict.self])

    public init() {}

    /// `imagecache cache clear`.
    public struct Clear: ClientCommand {
        public static let configuration = CommandConfiguration(
            abstract: "Empty thumbnails, searches or all (memory and disk).")

        @OptionGroup public var global: GlobalOptions

        @Argument(help: "thumbnails, searches or all.")
        public var what: CacheClearTarget = .all

        public init() {}

        public func run(connection: ImageCacheConnection) async throws {
            let result = try await connection.clearCache(what)
            Output.line(global.json ? try JSONOutput.text(result) : CacheSummary.render(result, what: "cleared \(what.rawValue)"))
        }
    }

    /// `imagecache cache evict`.
    public struct Evict: ClientCommand {
        public static let configuration = CommandConfiguration(
            abstract: "Remove one image's entries (every size) from memory and disk.")

        @OptionGroup public var global: GlobalOptions

        @Argument(help: ArgumentHelp("A photo id (provider:id) or an image URL.", valueName: "photo|url"))
        public var image: String

        public init() {}

        public func run(connection: ImageCacheConnection) async throws {
            let result = try await connection.evict(imageReference(image))
            Output.line(global.json ? try JSONOutput.text(result) : CacheSummary.render(result, what: "evicted \(image)"))
        }
    }
}

/// The line after `cache clear`/`cache evict`.
public enum CacheSummary {
    /// `cleared all: 42 entries, 3.1 MiB freed`.
    public static func render(_ result: CacheRemovalResult, what: String) -> String {
        "\(what): \(result.removed) entr\(result.removed == 1 ? "y" : "ies") removed, \(Units.bytes(result.bytes)) freed"
    }
}
