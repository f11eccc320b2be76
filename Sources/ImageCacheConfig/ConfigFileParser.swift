/// Applies cache.conf's lines to a configuration, one at a time, stopping at the first
/// problem with a `ConfigurationError` that names the file, line, key and section.
///
/// Strict on purpose: a typo in a key or section would otherwise be a setting silently not
/// applied, found only when the daemon misbehaves. Sections and keys may each appear once.
struct ConfigFileParser {
    let path: String
    let home: String

    func apply(text: String, to configuration: inout CacheConfiguration) throws(ConfigurationError) {
        let table = ConfigKey.bySection
        var section: String?
        var sectionLines: [String: Int] = [:]
        var keyLines: [String: Int] = [:]

        for (index, rawLine) in ConfigLexer.lines(of: text).enumerated() {
            let line = index + 1
            func fail(_ message: String, key: String? = nil) -> ConfigurationError {
                ConfigurationError(path: path, line: line, section: section, key: key, message: message)
            }
            let lexed: ConfigLine
            do {
                lexed = try ConfigLexer.lex(rawLine)
            } catch {
                throw fail(Self.message(for: error, section: section), key: Self.key(of: error))
            }
            switch lexed {
            case .blank:
                continue
            case .section(let name):
                guard table[name] != nil else { throw fail("unknown section [\(name)]") }
                if let first = sectionLines[name] {
                    throw fail("duplicate section [\(name)] (first on line \(first))")
                }
                sectionLines[name] = line
                section = name
            case .entry(let key, let value):
                guard let section else {
                    throw fail("key '\(key)' is outside any section (put it under its [section])", key: key)
                }
                guard let spec = table[section]?[key] else {
                    throw fail("unknown key '\(key)' in [\(section)]", key: key)
                }
                if let first = keyLines[spec.qualifiedName] {
                    throw fail("duplicate key '\(key)' in [\(section)] (first set on line \(first))", key: key)
                }
                keyLines[spec.qualifiedName] = line
                do {
                    try spec.apply(&configuration, value, .init(home: home, path: path, line: line))
                } catch {
                    throw fail(Self.message(for: error, key: key, section: section,
                                            shown: spec.isSecret ? nil : value.text), key: key)
                }
            }
        }
    }

    /// `'key' in [section]`, the phrase every value message uses.
    private static func name(_ key: String, _ section: String) -> String { "'\(key)' in [\(section)]" }

    private static func message(for problem: ConfigValueProblem, key: String, section: String, shown: String?) -> String {
        let value = shown.map { " '\($0)'" } ?? ""
        switch problem {
        case .missing:
            return "missing value for \(name(key, section))"
        case .bad(let expected):
            return "bad value\(value) for \(name(key, section)): expected \(expected)"
        case .badUnit(let unit, let allowed):
            return "bad unit '\(unit)' for \(name(key, section)): \(allowed)"
        case .outOfRange(let rule):
            return "out-of-range value\(value) for \(name(key, section)): \(rule)"
        case .notSingle:
            return "expected one value for \(name(key, section)), found a list"
        case .emptyListEntry:
            return "empty entry in the list for \(name(key, section))"
        }
    }

    private static func message(for problem: ConfigSyntaxProblem, section: String?) -> String {
        let place = section.map { " in [\($0)]" } ?? ""
        switch problem {
        case .missingEquals(let key):
            return key.isEmpty ? "missing '='\(place)" : "missing '=' after '\(key)'\(place)"
        case .missingKey:
            return "missing key before '='\(place)"
        case .badKeyName(let key):
            return "bad key name '\(key)'\(place): keys are letters, digits and '_'"
        case .unterminatedSection(let header):
            return "unterminated section header '\(header)': missing ']'"
        case .badSectionName(let name):
            return "bad section name [\(name)]"
        case .textAfterSection(let text):
            return "unexpected text '\(text)' after the section header"
        case .unterminatedQuote(let key):
            return "unterminated quoted string for '\(key)'\(place)"
        case .badEscape(let key, let escape):
            return "unknown escape '\(escape)' for '\(key)'\(place): use \\\" \\\\ \\n or \\t"
        case .quoteInBareValue(let key):
            return "unexpected '\"' inside an unquoted value for '\(key)'\(place): quote the whole value"
        case .textAfterQuote(let key):
            return "unexpected text after the closing quote for '\(key)'\(place)"
        }
    }

    private static func key(of problem: ConfigSyntaxProblem) -> String? {
        switch problem {
        case .missingEquals(let key), .badKeyName(let key), .unterminatedQuote(let key),
             .badEscape(let key, _), .quoteInBareValue(let key), .textAfterQuote(let key):
            key.isEmpty ? nil : key
        case .missingKey, .unterminatedSection, .badSectionName, .textAfterSection:
            nil
        }
    }
}
