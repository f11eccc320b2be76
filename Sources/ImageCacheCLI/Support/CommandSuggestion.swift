import ArgumentParser

/// "Did you mean" for a mistyped subcommand, found by edit distance over the command tree.
///
/// The argument parser reports `imagecache serch fox` as an unexpected argument; this walks
/// the words the way the parser will (options skipped, `--socket`'s value too) and, where a
/// word stands in a subcommand's place without naming one, says which it is closest to.
public enum CommandSuggestion {
    /// Root options that take a value, so their value is not read as a command.
    static let valueOptions: Set<String> = ["--socket", "--generate-completion-script"]
    /// Words the parser itself understands in a command's place.
    static let builtins: Set<String> = ["help"]

    /// The message for the first unknown subcommand in `arguments`, or nil when every word
    /// in a command's place names one (or the command takes arguments there).
    public static func unknownCommand(in arguments: [String], root: any ParsableCommand.Type) -> String? {
        var command = root
        var path = [root._commandName]
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "--" { return nil }
            if word.hasPrefix("-") {
                if valueOptions.contains(word) { index += 1 }
                index += 1
                continue
            }
            let children = command.configuration.subcommands
            if children.isEmpty || builtins.contains(word) { return nil }
            if let child = children.first(where: { $0._commandName == word || $0.configuration.aliases.contains(word) }) {
                command = child
                path.append(word)
                index += 1
                continue
            }
            let names = children.map { $0._commandName }
            let best = names.map { (name: $0, distance: distance(word, $0)) }.min { $0.distance < $1.distance }
            let close = best.map { $0.distance <= max(1, min(2, $0.name.count / 3)) } ?? false
            // A command with a default subcommand takes other words as its arguments
            // (`download PHOTO`): only a near miss of a subcommand's name is a mistake there.
            if command.configuration.defaultSubcommand != nil {
                return close && !word.contains(":") ? message(word, path: path, suggestion: best?.name, names: names) : nil
            }
            return message(word, path: path, suggestion: close ? best?.name : nil, names: names)
        }
        return nil
    }

    static func message(_ word: String, path: [String], suggestion: String?, names: [String]) -> String {
        let scope = path.joined(separator: " ")
        if let suggestion { return "'\(word)' is not a command of \(scope). Did you mean '\(suggestion)'?" }
        return "'\(word)' is not a command of \(scope). Commands: \(names.joined(separator: ", "))."
    }

    /// The edit distance between two words (insertions, deletions, substitutions, and the
    /// swap of two neighbours — the commonest typo, `claer` — as one edit: optimal string
    /// alignment), over characters; words here are short, so the quadratic table is nothing.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
