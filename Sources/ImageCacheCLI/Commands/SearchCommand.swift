import ArgumentParser
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache search`: one page of photos as a table.
public struct SearchCommand: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search a provider and print one page of photos.",
        discussion: """
        The words are joined with spaces, so `search red fox` and `search "red fox"` are the \
        same query. Prints a table (id, size, author, likes, description) and "page N of M". \
        On a terminal the description is cut to its width; into a pipe or a file nothing is \
        cut. A page answered from the daemon's cache says "from cache"; one served because \
        the network failed says "STALE". Safe search is on unless --no-safe.

        EXAMPLES
          imagecache search sunset beach
          imagecache search mountains --provider pixabay --page 2 --per-page 50
          imagecache search --recent --provider flickr
          imagecache search red fox --ndjson | jq -r .id
        """)

    @OptionGroup public var global: GlobalOptions

    @Argument(help: ArgumentHelp("Words to search for (at least 3 characters in all).", valueName: "word"))
    public var words: [String] = []

    @OptionGroup public var pageOptions: SearchPageOptions

    /// `--provider`, nil for the daemon's default.
    public var provider: String? { pageOptions.provider }
    /// `--page`, 1-based.
    public var page: Int { pageOptions.page }
    /// `--per-page`, nil for the daemon's default.
    public var perPage: Int? { pageOptions.perPage }

    @Flag(help: "The provider's newest photos instead of a query.")
    public var recent = false

    @Flag(inversion: .prefixedNo, help: "Ask the provider for safe-search results (the default; --no-safe turns it off).")
    public var safe = true

    public init() {}

    /// The query: the words joined with single spaces; nil when none were given.
    public var query: String? { words.isEmpty ? nil : words.joined(separator: " ") }

    public func validate() throws {
        if recent, query != nil { throw ValidationError("Give either words to search for or --recent, not both.") }
        if !recent, query == nil { throw ValidationError("Give words to search for, or --recent for the newest photos.") }
    }

    /// What to say when the daemon served another page size than `--per-page` asked: it
    /// clamps the size into the provider's range (protocol.md, `search`) and answers the size
    /// used, so the difference is the provider's limit. Nil when nothing was clamped.
    static func perPageNote(asked: Int?, result: SearchResult) -> String? {
        guard let asked, asked != result.perPage else { return nil }
        let bound = asked > result.perPage ? "maximum" : "minimum"
        return "--per-page \(asked) is beyond \(result.provider)'s range: clamped to \(result.perPage), its \(bound)"
    }

    /// The params this command line asks for.
    public var params: SearchParams {
        SearchParams(query: recent ? nil : query, feed: recent ? .recent : nil, provider: provider, page: page, perPage: perPage, safe: safe)
    }

    public func run(connection: ImageCacheConnection) async throws {
        let result = try await connection.search(params)
        if let note = Self.perPageNote(asked: perPage, result: result) { Output.note("imagecache: " + note) }
        if global.jsonOutput {
            try JSONOutput.emit(result, records: result.photos, global: global)
        } else if global.quiet {
            for row in SearchTable.resultRows(result, width: Terminal.current().tableWidth) { Output.line(row) }
        } else {
            Output.line(SearchTable.render(result, width: Terminal.current().tableWidth))
        }
    }
}
