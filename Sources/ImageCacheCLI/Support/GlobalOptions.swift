import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// Options every command takes, so `imagecache stats --json` and
/// `imagecache --socket /tmp/x.sock stats` both work.
public struct GlobalOptions: ParsableArguments, Sendable {
    /// `--socket`: nil means the look-up of `SocketLookup` (environment, cache.conf, defaults).
    @Option(name: .long, help: ArgumentHelp(
        "The daemon's Unix socket.",
        discussion: "Default: $IMAGECACHE_SOCKET, else socket = in cache.conf (the daemon's own look-up: "
            + "$XDG_CONFIG_HOME/imagecached/cache.conf, then /etc/imagecached/cache.conf), else "
            + "$XDG_RUNTIME_DIR/imagecached.sock when it exists, else /run/imagecached/imagecached.sock.",
        valueName: "path"), completion: .file())
    public var socket: String?

    /// `--json`: print the protocol result (or error object) as JSON.
    @Flag(name: .long, help: "Print the result as one pretty JSON document (errors too, as {\"error\": …}); see README, \"JSON output\".")
    public var json = false

    /// `--ndjson`: the same objects, compact, one per line; lists one element per line.
    @Flag(name: .long, help: "Print compact JSON, one object per line (a list: one line per element).")
    public var ndjson = false

    /// `-q`: results only.
    @Flag(name: .shortAndLong, help: "Print results only: no progress bars, no narration (errors still go to stderr).")
    public var quiet = false

    /// `-v`: more narration.
    @Flag(name: .shortAndLong, help: "Say more on stderr: which socket and why, how long each call took.")
    public var verbose = false

    public init() {}

    /// Whether the output is JSON of either form (no bars, no text tables).
    public var jsonOutput: Bool { json || ndjson }

    /// `-q`/`-v` as one value (`-q` wins when both are given: it is the safer for a script).
    public var verbosity: Verbosity { quiet ? .quiet : verbose ? .verbose : .normal }

    /// The socket to connect to and why that one (see `SocketLookup`).
    public func socketChoice(environment: [String: String] = ProcessInfo.processInfo.environment) -> SocketLookup.Choice {
        SocketLookup.resolve(flag: socket, environment: environment)
    }

    /// The socket to connect to: `--socket`, else the look-up of `SocketLookup`.
    public func socketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        socketChoice(environment: environment).path
    }
}

/// The argument `PHOTO|URL` of `show`, `download` and `cache evict`: anything that starts
/// with `http://` or `https://` is a URL, anything else a photo id.
public func imageReference(_ argument: String) -> ImageReference {
    isURL(argument) ? .url(argument) : .photo(argument)
}

/// Whether a command-line word names an image by URL (`http://`, `https://`).
public func isURL(_ argument: String) -> Bool {
    let lower = argument.lowercased()
    return lower.hasPrefix("http://") || lower.hasPrefix("https://")
}
