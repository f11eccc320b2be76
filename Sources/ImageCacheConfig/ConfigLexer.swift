// Why a hand-written lexer rather than a TOML library: cache.conf's values are written bare
// (`memory_limit = 64MiB`, `connect_timeout = 10s`), which TOML rejects (it would need
// `"64MiB"`), and INI readers differ on comments and quoting and lose line numbers. The
// grammar is small enough to be read whole here, and owning it lets every error name the
// file, the line, the key and the section.
//
// Grammar, one line at a time (`\n` or `\r\n` ends a line; a UTF-8 byte-order mark is skipped):
//   blank line | `# comment` | `[section]` | `key = value`, each optionally followed by
//   `# comment`. `#` starts a comment anywhere except inside a quoted string.
//   value: items separated by `,`; an item is bare text (trimmed) or a `"quoted string"` with
//   the escapes `\"` `\\` `\n` `\t`. Nothing but spaces may follow a closing quote except
//   `,` or a comment.

/// One line of cache.conf, classified, with comments and surrounding spaces removed.
enum ConfigLine: Equatable {
    case blank
    case section(String)
    case entry(key: String, value: ConfigRawValue)
}

/// A value as written, before it is read as a size, a duration, a list…
///
/// Kept as items (split at the commas outside quotes) plus the whole text, because the key
/// decides: a list wants the items, an unquoted string wants the text commas included
/// (`user_agent = app/1.0 (Linux, x86_64)`).
struct ConfigRawValue: Equatable {
    /// One comma-separated piece: its text (unescaped when quoted) and whether it was quoted.
    struct Item: Equatable {
        var text: String
        var quoted: Bool
    }

    /// The items; empty when nothing follows `=` (an empty value).
    var items: [Item]
    /// Everything after `=` up to the comment, trimmed, as written (quotes included).
    var text: String
}

/// A syntax problem found by the lexer; the parser turns it into a `ConfigurationError`
/// naming the file, line and section.
enum ConfigSyntaxProblem: Error, Equatable {
    case missingEquals(key: String)
    case missingKey
    case badKeyName(String)
    case unterminatedSection(String)
    case badSectionName(String)
    case textAfterSection(String)
    case unterminatedQuote(key: String)
    case badEscape(key: String, escape: String)
    case quoteInBareValue(key: String)
    case textAfterQuote(key: String)
}

/// cache.conf's lines, lexed one at a time (the grammar above); package-wide so that the
/// start-up checks can point a problem found after parsing at the line that set it.
package enum ConfigLexer {
    /// Splits a file's text into lines, keeping `\r\n` files' line numbers right (Swift
    /// treats `\r\n` as one Character) and dropping a leading byte-order mark.
    static func lines(of text: String) -> [Substring] {
        var body = Substring(text)
        if body.first == "\u{FEFF}" { body = body.dropFirst() }
        return body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
    }

    /// Classifies one line.
    static func lex(_ line: Substring) throws(ConfigSyntaxProblem) -> ConfigLine {
        let content = line.drop(while: isSpace)
        guard let first = content.first, first != "#" else { return .blank }
        if first == "[" { return try lexSection(content) }
        return try lexEntry(content)
    }

    private static func isSpace(_ c: Character) -> Bool { c == " " || c == "\t" || c == "\r" }

    static func trimmed(_ s: Substring) -> Substring {
        var s = s.drop(while: isSpace)
        while let last = s.last, isSpace(last) { s = s.dropLast() }
        return s
    }

    private static func lexSection(_ content: Substring) throws(ConfigSyntaxProblem) -> ConfigLine {
        let header = content.prefix { $0 != "#" }
        guard let close = header.firstIndex(of: "]") else {
            throw .unterminatedSection(String(trimmed(header)))
        }
        let name = String(trimmed(header[header.index(after: header.startIndex)..<close]))
        let rest = trimmed(content[content.index(after: close)...])
        if !rest.isEmpty && rest.first != "#" { throw .textAfterSection(String(rest)) }
        // Any plausible name passes here so that `[Cache]` reads as an unknown section.
        let allowed = name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-") }
        guard !name.isEmpty, allowed else { throw .badSectionName(name) }
        return .section(name)
    }

    private static func lexEntry(_ content: Substring) throws(ConfigSyntaxProblem) -> ConfigLine {
        let beforeComment = content.prefix { $0 != "#" }
        guard let equals = beforeComment.firstIndex(of: "=") else {
            let words = trimmed(beforeComment).split(whereSeparator: isSpace)
            throw .missingEquals(key: words.first.map(String.init) ?? "")
        }
        let key = String(trimmed(content[..<equals]))
        if key.isEmpty { throw .missingKey }
        let keyAllowed = key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        guard keyAllowed else { throw .badKeyName(key) }
        let value = try lexValue(content[content.index(after: equals)...], key: key)
        return .entry(key: key, value: value)
    }

    /// Reads a value up to its comment: items split at commas outside quotes.
    private static func lexValue(_ raw: Substring, key: String) throws(ConfigSyntaxProblem) -> ConfigRawValue {
        var items: [ConfigRawValue.Item] = []
        var current = ""
        var currentQuoted = false
        var afterQuote = false
        var sawAnything = false
        var end = raw.endIndex
        var index = raw.startIndex

        func finishItem() {
            let text = currentQuoted ? current : String(trimmed(Substring(current)))
            items.append(.init(text: text, quoted: currentQuoted))
            current = ""
            currentQuoted = false
            afterQuote = false
        }

        scan: while index < raw.endIndex {
            let c = raw[index]
            switch c {
            case "#":
                end = index
                break scan
            case ",":
                sawAnything = true
                finishItem()
            case "\"":
                sawAnything = true
                if afterQuote { throw .textAfterQuote(key: key) }
                if !trimmed(Substring(current)).isEmpty { throw .quoteInBareValue(key: key) }
                current = ""
                currentQuoted = true
                index = raw.index(after: index)
                var closed = false
                while index < raw.endIndex {
                    let q = raw[index]
                    if q == "\"" { closed = true; break }
                    if q == "\\" {
                        index = raw.index(after: index)
                        guard index < raw.endIndex else { break }
                        switch raw[index] {
                        case "\"": current.append("\"")
                        case "\\": current.append("\\")
                        case "n": current.append("\n")
                        case "t": current.append("\t")
                        default: throw .badEscape(key: key, escape: "\\" + String(raw[index]))
                        }
                    } else {
                        current.append(q)
                    }
                    index = raw.index(after: index)
                }
                guard closed else { throw .unterminatedQuote(key: key) }
                afterQuote = true
            default:
                if isSpace(c) {
                    if !afterQuote { current.append(c) }
                } else {
                    sawAnything = true
                    if afterQuote { throw .textAfterQuote(key: key) }
                    current.append(c)
                }
            }
            index = raw.index(after: index)
        }
        if sawAnything { finishItem() }
        return ConfigRawValue(items: items, text: String(trimmed(raw[raw.startIndex..<end])))
    }
}
