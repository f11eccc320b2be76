import ArgumentParser
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache download`: saves full-size images through the daemon's download jobs, and
/// looks after jobs started earlier (`--detach`, another client, before a daemon restart).
///
/// `start` is the default subcommand, so `imagecache download PHOTO…` starts and follows
/// jobs as it always did; `status`, `list`, `watch` and `cancel` take job ids.
public struct DownloadCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Save full-size photos to a folder; follow, list or cancel download jobs.",
        usage: """
        imagecache download [start] <photo|url> ... [-o <dir>] [-O <name>]
                            [--variant full|regular] [--detach]
        imagecache download status|watch|cancel <job> ...
        imagecache download list [--active]
        """,
        discussion: """
        `imagecache download PHOTO|URL…` (the same as `download start`) starts one daemon \
        job per image and follows them with a progress bar each; Ctrl-C cancels them. With \
        --detach it prints the job ids and returns: the jobs go on in the daemon, survive a \
        daemon restart, and stay listed for 24 h after they end. The other subcommands take \
        those ids.

        EXAMPLES
          imagecache download unsplash:Dwu85P9SOIk
          imagecache download pixabay:195893 flickr:4321368 -o ~/Pictures
          imagecache download unsplash:Dwu85P9SOIk --variant regular --detach
          imagecache download list
          imagecache download status dl-3f9a0c41b2e7
          imagecache download watch dl-3f9a0c41b2e7
          imagecache download cancel dl-3f9a0c41b2e7
          imagecache download list --json | jq -r '.jobs[].job'

        EXIT STATUS
        start and watch exit 0 when every file was saved, else with the status of the \
        first failure's kind (16 when cancelled; see `imagecache --help`), and 130 on \
        Ctrl-C. status, list and cancel exit 0 when the daemon answered, whatever the \
        jobs' states, and 15 for a job id the daemon does not know.
        """,
        subcommands: [DownloadStart.self, DownloadStatus.self, DownloadList.self, DownloadWatch.self, DownloadCancel.self],
        defaultSubcommand: DownloadStart.self)

    /// Accepts `--socket`/`--json` between `download` and the subcommand, as the root does
    /// before the command name.
    @OptionGroup public var global: GlobalOptions

    public init() {}
}
