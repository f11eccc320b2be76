/// Download job ids as the CLI prints them: one fixed-width column, so lists line up and a
/// script can cut the id out of a line by position.
public enum JobID {
    /// The width of a daemon job id (`dl-` and 12 hex digits).
    public static let width = 15

    /// `id` padded to `width`; a longer id (another daemon's) is kept whole, never cut.
    public static func padded(_ id: String) -> String {
        DisplayWidth.of(id) >= width ? id : id + String(repeating: " ", count: width - DisplayWidth.of(id))
    }

    /// Whether a command-line word is a job id (`dl-3f9a0c41b2e7`), so a command that wants
    /// a photo id can say which command takes it instead.
    public static func looksLikeJobID(_ word: String) -> Bool {
        guard word.hasPrefix("dl-") else { return false }
        let rest = word.dropFirst(3)
        return !rest.isEmpty && rest.allSatisfy(\.isHexDigit)
    }
}
