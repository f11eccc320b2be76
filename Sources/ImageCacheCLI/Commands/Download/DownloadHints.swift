/// The follow-up commands `download` prints (`download watch …`, `download cancel …`), spelled
/// so they can be pasted as they are: with the same `--socket` when one was given, since
/// without it they would ask another daemon (or none) about jobs it never heard of.
enum DownloadHints {
    /// `imagecache [--socket S] download <subcommand> <jobs…>`.
    static func command(_ subcommand: String, jobs: [String], global: GlobalOptions) -> String {
        command(subcommand, jobs: jobs, socket: global.socket)
    }

    /// The same, with `--socket` given as its value (nil: none was given).
    static func command(_ subcommand: String, jobs: [String], socket: String?) -> String {
        var words = ["imagecache"]
        if let socket { words += ["--socket", shellQuoted(socket)] }
        words += ["download", subcommand]
        return (words + jobs).joined(separator: " ")
    }

    /// `text` as one shell word: unchanged when it holds only safe characters, else in single
    /// quotes (a `'` inside written as `'\''`).
    static func shellQuoted(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "/._-+:@%=,".unicodeScalars.contains(scalar))
        }
        if safe, !text.isEmpty { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
