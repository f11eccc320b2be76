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
          imagecache cache clear all --yes
          imagecache cache evict unsplash:Dwu85P9SOIk
        """,
        subcommands: [Clear.self, Evict.self])

    public init() {}

    /// `imagecache cache clear`.
    public struct Clear: ClientCommand {
        public static let configuration = CommandConfiguration(
            abstract: "Empty thumbnails, searches or all (memory and disk).")

        @OptionGroup public var global: GlobalOptions

        @Argument(help: "thumbnails, searches or all (all needs --yes).")
        public var what: CacheClearTarget?

        @Flag(name: [.customShort("y"), .long], help: "Confirm `cache clear all`.")
        public var yes = false

        public init() {}

        /// The protocol requires `what` so nothing is emptied by accident; the CLI asks the
        /// same, and `all` (every thumbnail and every stored page) needs `--yes` besides.
        public func validate() throws {
            guard let what else {
                throw ValidationError("Say what to clear: thumbnails, searches or all (all needs --yes).")
            }
            if what == .all, !yes {
                throw ValidationError("`cache clear all` empties every thumbnail and every stored search page: add --yes to confirm.")
            }
        }

        public func run(connection: ImageCacheConnection) async throws {
            guard let what else { return }
            let result = try await connection.clearCache(what)
            if global.jsonOutput {
                try JSONOutput.emit(result, global: global)
            } else {
                Output.line(CacheSummary.render(result, what: "cleared \(what.rawValue)"))
            }
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

        public func validate() throws { try ImageArgument.check(image) }

        public func run(connection: ImageCacheConnection) async throws {
            let result = try await connection.evict(imageReference(image))
            if global.jsonOutput { try JSONOutput.emit(result, global: global) } else { Output.line(CacheSummary.render(result, what: "evicted \(image)")) }
        }
    }
}

/// The line after `cache clear`/`cache evict`.
public enum CacheSummary {
    /// `cleared all: 42 entries, 3.1 MiB freed`.
    public static func render(_ result: CacheRemovalResult, what: String) -> String {
        "\(what): \(Units.count(result.removed, "entry", "entries")) removed, \(Units.bytes(result.bytes)) freed"
    }
}
