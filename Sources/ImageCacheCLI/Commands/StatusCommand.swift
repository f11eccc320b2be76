import ArgumentParser
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache status`: is the daemon there, which version, which providers have keys.
public struct StatusCommand: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show whether the daemon answers, its version, protocol and providers.",
        discussion: """
        Calls hello. Exits 69 with a message naming the socket when no daemon listens there.

        EXAMPLES
          imagecache status
          imagecache status --socket /run/imagecached/imagecached.sock --json
        """)

    @OptionGroup public var global: GlobalOptions

    public init() {}

    public func run(connection: ImageCacheConnection) async throws {
        let hello = try await connection.hello()
        if global.jsonOutput { try JSONOutput.emit(hello, global: global) } else { Output.line(StatusSummary.render(hello, socketPath: connection.socketPath)) }
    }
}

/// `imagecache stats`: the daemon's counters in a readable summary.
public struct StatsCommand: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show the daemon's cache, network and provider counters.",
        discussion: """
        Memory and disk tiers (entries, bytes against their limits, hits, misses, hit rate), \
        where thumbnail requests were answered (memory, disk, network) and the cache's hit rate, \
        transfers (in flight, queued, requests, bytes received and discarded on cancellation), \
        each provider's requests, errors and remaining rate limit, sessions and uptime.

        EXAMPLES
          imagecache stats
          imagecache stats --json
        """)

    @OptionGroup public var global: GlobalOptions

    public init() {}

    public func run(connection: ImageCacheConnection) async throws {
        // Read as sent: a daemon without some engine parts reports fewer sections (see
        // `StatsSummary.render(_: JSONValue)`), and --json passes the answer through unchanged.
        let stats = try await connection.call(method: MethodName.stats.rawValue)
        if global.jsonOutput { try JSONOutput.emit(stats, global: global) } else { Output.line(StatsSummary.render(stats)) }
    }
}
