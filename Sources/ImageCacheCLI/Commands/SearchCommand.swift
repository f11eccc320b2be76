import ArgumentParser
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache search`: one page of photos as a table.
public struct SearchCommand: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search a provider and print one page of photos.",
        discussion: """
        Prints a table (id, size, author, likes, description cut to the terminal width) and \
        "page N of M". A page answered from the daemon's cache says "from cache"; one served \
        because the network failed says "STALE".

        EXAMPLES
          imagecache search "sunset beach"
          imagecache search mountains --provider pixabay --page 2 --per-page 50
          imagecache search --recent --provider flickr
        """)

    @OptionGroup public var global: GlobalOptions

    @Argument(help: "Words to search for (at least 3 characters).")
    public var query: String?

    @Option(help: "unsplash, flickr or pixabay (default: the daemon's default_provider).")
    public var provider: String?

    @Option(help: "1-based page number.")
    public var page: Int = 1

    @Option(name: .customLong("per-page"), help: "Results per page (clamped to the provider's range).")
    public var perPage: Int?

    @Flag(help: "The provider's newest photos instead of a query.")
    public var recent = false

    public init() {}

    public func validate() throws {
        if recent, query != nil { throw ValidationError("Give either QUERY or --recent, not both.") }
        if !recent, query == nil { throw ValidationError("Give a QUERY, or --recent for the newest photos.") }
        if page < 1 { throw ValidationError("--page must be 1 or more.") }
        if let perPage, perPage < 1 { throw ValidationError("--per-page must be 1 or more.") }
    }

    /// The params this command line asks for.
    public var params: SearchParams {
        SearchParams(query: recent ? nil : query, feed: recent ? .recent : nil, provider: provider, page: page, perPage: perPage)
    }

    public func run(connection: ImageCacheConnection) async throws {
        let result = try await connection.search(params)
        Output.line(global.json ? try JSONOutput.text(result) : SearchTable.render(result, width: Terminal.current().width))
    }
}
