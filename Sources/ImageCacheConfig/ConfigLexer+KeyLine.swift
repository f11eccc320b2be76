import Foundation

extension ConfigLexer {
    /// The 1-based line where `key` is set in `[section]` of the file at `path`, so a problem
    /// found after parsing still points at its line; nil when it is not in the file (a
    /// default) or the file cannot be read. Read with the lexer the parser uses, so both
    /// agree on what a line is.
    package static func line(of key: String, section: String, in path: String?) -> Int? {
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var current = ""
        for (index, line) in lines(of: text).enumerated() {
            switch try? lex(line) {
            case .section(let name): current = name
            case .entry(let name, _) where name == key && current == section: return index + 1
            default: continue
            }
        }
        return nil
    }
}
