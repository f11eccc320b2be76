import ArgumentParser

/// Which page of which provider's search: `search` prints it, `layout` lays it out. One
/// group, so the two commands take the same flags with the same rules and help.
public struct SearchPageOptions: ParsableArguments {
    @Option(help: "unsplash, flickr or pixabay (default: the daemon's default_provider).",
            completion: .list(Completions.providers))
    public var provider: String?

    @Option(help: "1-based page number.")
    public var page: Int = 1

    @Option(name: .customLong("per-page"), help: "Results per page; a size beyond the provider's range is clamped to it, with a note on stderr.")
    public var perPage: Int?

    public init() {}

    public func validate() throws {
        if page < 1 { throw ValidationError("--page must be 1 or more.") }
        if let perPage, perPage < 1 { throw ValidationError("--per-page must be 1 or more.") }
    }
}
