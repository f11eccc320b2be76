import ArgumentParser
import Foundation
import ImageCacheClient

/// `imagecache`: the companion CLI of imagecached. `main.swift` only calls `main()` on this,
/// so every command can be parsed and tested from `ImageCacheCLITests`.
public struct ImageCacheRoot: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "imagecache",
        abstract: "Search, show, prefetch, lay out and download photos through the imagecached daemon.",
        discussion: """
        imagecache talks to a running imagecached over its Unix socket (JSON-RPC, one JSON \
        object per line). Results go to stdout; progress bars, narration and errors to \
        stderr. Every command takes --socket PATH, --json or --ndjson, -q (results only) and \
        -v (say more). Without --socket the socket is $IMAGECACHE_SOCKET, else socket = in \
        the daemon's cache.conf, else the default below.

        EXAMPLES
          imagecache demo                 # the whole story, offline
          imagecache demo --keep-running  # then a sandbox daemon to try
          imagecache demo --gallery       # the web gallery, offline
          imagecache gallery              # the web gallery on your daemon
          imagecache status               # who answers; which keys are set
          imagecache search sunset beach --page 2
          imagecache photo unsplash:Dwu85P9SOIk   # author, links, EXIF, tags
          imagecache show unsplash:Dwu85P9SOIk --size 512
          imagecache download unsplash:Dwu85P9SOIk -o ~/Downloads/photos
          imagecache download list        # jobs, their state and files
          imagecache layout beach --columns 3 --width 900 --svg grid.svg
          imagecache --json stats | jq .network

        EXIT STATUS
        \(ExitStatus.helpTable)

        ENVIRONMENT
          IMAGECACHE_SOCKET   the socket, when --socket is not given

        FILES
          $XDG_RUNTIME_DIR/imagecached.sock   the user daemon's socket
          /run/imagecached/imagecached.sock   the system daemon's socket
          $XDG_CONFIG_HOME/imagecached/cache.conf, /etc/imagecached/cache.conf
                                              where socket = is read from

        SEE ALSO
          imagecached(8)
        """,
        version: ImageCacheVersion.current,
        subcommands: [
            StatusCommand.self, StatsCommand.self, SearchCommand.self, PhotoCommand.self, ShowCommand.self,
            PrefetchCommand.self, DownloadCommand.self, LayoutCommand.self, CacheCommand.self,
            GalleryCommand.self, DemoCommand.self, SimulatorCommand.self, ManPageCommand.self,
        ]
    )

    @OptionGroup public var global: GlobalOptions

    public init() {}

    /// Parses the process's arguments and runs the command, exiting with its status.
    /// Called from `main.swift`, whose top-level code would otherwise pick the synchronous
    /// `main()` overload, which cannot run async commands.
    public static func runMain() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let mistake = CommandSuggestion.unknownCommand(in: arguments, root: ImageCacheRoot.self) {
            Output.error("imagecache: \(mistake)\nSee 'imagecache --help'.")
            Foundation.exit(ExitStatus.usage.rawValue)
        }
        HelpLayout.printHelpIfAsked(arguments, root: ImageCacheRoot.self)
        if Completions.asksForBashScript(arguments) {
            Output.out(Completions.bashScript())
            Foundation.exit(0)
        }
        await main()
    }
}
