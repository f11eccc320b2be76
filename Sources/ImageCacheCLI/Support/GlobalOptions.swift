import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// Options every command takes, so `imagecache stats --json` and
/// `imagecache --socket /tmp/x.sock stats` both work.
public struct GlobalOptions: ParsableArguments, Sendable {
    /// `--socket`: nil means the default a client computes (`socketPath(environment:)`).
    @Option(name: .long, help: ArgumentHelp(
        "The daemon's Unix socket.",
        discussion: "Default: $XDG_RUNTIME_DIR/imagecached.sock when it exists, else /run/imagecached/imagecached.sock.",
        valueName: "path"))
    public var socket: String?

    /// `--json`: print the protocol result (or error object) as JSON.
    @Flag(name: .long, help: "Print the daemon's answer as JSON instead of text (errors too, as {\"error\": …}).")
    public var json = false

    public init() {}

    /// The socket to connect to: `--socket`, else the default a client computes.
    public func socketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        socket ?? ImageCacheConnection.defaultSocketPath(environment: environment)
    }
}

/// The argument `PHOTO|URL` of `show`, `download` and `cache evict`: anything that starts
/// with `http://` or `https://` is a URL, anything else a photo id.
public func imageReference(_ argument: String) -> ImageReference {
    let lower = argument.lowercased()
    return lower.hasPrefix("http://") || lower.hasPrefix("https://") ? .url(argument) : .photo(argument)
}
