import ImageCacheProtocol

/// The base64 text of a memory entry's content, as the memory tier keeps it for inline
/// answers (`ImageCache.memoryHit(_:base64:)`).
public enum InlineBase64: Sendable, Hashable {
    /// In a sealed memory file, followed by the rest of a `thumbnail.show` answer line
    /// (`ThumbnailShowResult.lineEndAfterData`): an answer sends its whole end from there, in
    /// one call and without copying it (`SealedMemoryFile`).
    case lineEnd(SealedMemoryFile)
    /// As a string: when no sealed file could be made (its descriptor budget is used up).
    case text(String)

    /// The sealed file of `text` followed by the end of an answer line, or the text itself
    /// when no file can be made.
    public static func make(_ text: String) -> InlineBase64 {
        make(text, budget: SealedMemoryFile.budget)
    }

    /// `make` against a given file budget (tests spend it).
    static func make(_ text: String, budget: Int) -> InlineBase64 {
        SealedMemoryFile.make(text.utf8 + ThumbnailShowResult.lineEndAfterData, budget: budget).map(InlineBase64.lineEnd) ?? .text(text)
    }

    /// Its length in bytes (what it is charged in the memory tier).
    public var count: Int {
        switch self {
        case .lineEnd(let file): return file.count
        case .text(let text): return text.utf8.count
        }
    }

    /// The base64 text alone (a file is read back: for tests and checks).
    public var string: String {
        switch self {
        case .lineEnd(let file):
            return String(decoding: file.contents().dropLast(ThumbnailShowResult.lineEndAfterData.count), as: UTF8.self)
        case .text(let text): return text
        }
    }
}
