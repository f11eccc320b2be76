import Foundation
import Logging

/// Why a value was refused; the parser adds the file, line, key and section.
enum ConfigValueProblem: Error, Equatable {
    /// Nothing after `=` for a key that needs a value.
    case missing
    /// Not of the expected form; `expected` says what would have been accepted.
    case bad(expected: String)
    /// A number with a unit this kind of value does not take.
    case badUnit(String, allowed: String)
    /// Well-formed but outside what the key allows; `rule` says the bound.
    case outOfRange(rule: String)
    /// A list (commas outside quotes, with quoted items) where one value is wanted.
    case notSingle
    /// `a,,b` or a trailing comma in a list.
    case emptyListEntry
}

/// Unit tables, shared by the readers and by rendering so the two cannot disagree.
enum ConfigUnits {
    /// Size units, largest first; powers of 1024 only, because `MB` would be ambiguous
    /// (10^6 to a disk vendor, 2^20 to most tools) and a cache limit should mean one thing.
    static let sizes: [(name: String, factor: Int)] = [
        ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1),
    ]
    /// Duration units in milliseconds, largest first.
    static let durations: [(name: String, milliseconds: Int64)] = [
        ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1),
    ]
    static let sizeHelp = "sizes take B, KiB, MiB, GiB or TiB (powers of 1024); a plain number is bytes"
    static let durationHelp = "durations take ms, s, m or h"
}

extension ConfigRawValue {
    /// The one value as a string, or nil when nothing follows `=`. Unquoted text keeps its
    /// commas (`a, b` reads as `a, b`); quoted items separated by commas are a list → error.
    func optionalString() throws(ConfigValueProblem) -> String? {
        if items.isEmpty { return nil }
        if items.count == 1 { return items[0].text }
        if items.contains(where: \.quoted) { throw .notSingle }
        return text
    }

    /// The one value as a string; an empty value is an error.
    func requiredString() throws(ConfigValueProblem) -> String {
        guard let value = try optionalString(), !value.isEmpty else { throw .missing }
        return value
    }

    /// The comma-separated items; an empty value is the empty list.
    func list() throws(ConfigValueProblem) -> [String] {
        var result: [String] = []
        for item in items {
            guard !item.text.isEmpty else { throw .emptyListEntry }
            result.append(item.text)
        }
        return result
    }

    /// A whole number of bytes with an optional unit: `512KiB`, `64MiB`, `2GiB`, `1048576`.
    func size() throws(ConfigValueProblem) -> Int {
        let (number, unit) = try splitNumber(expected: "a size such as 512KiB, 64MiB or 2GiB")
        guard let factor = ConfigUnits.sizes.first(where: { $0.name == unit })?.factor ?? (unit.isEmpty ? 1 : nil) else {
            throw .badUnit(unit, allowed: ConfigUnits.sizeHelp)
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: factor)
        guard !overflow else { throw .outOfRange(rule: "too large") }
        return bytes
    }

    /// A whole number with a unit: `250ms`, `30s`, `5m`, `24h`. A bare number is refused
    /// because `timeout = 30` could mean seconds or milliseconds.
    func duration() throws(ConfigValueProblem) -> Duration {
        let expected = "a duration with a unit, such as 250ms, 30s, 5m or 24h"
        let (number, unit) = try splitNumber(expected: expected)
        guard !unit.isEmpty else { throw .bad(expected: expected) }
        guard let factor = ConfigUnits.durations.first(where: { $0.name == unit })?.milliseconds else {
            throw .badUnit(unit, allowed: ConfigUnits.durationHelp)
        }
        let (milliseconds, overflow) = Int64(number).multipliedReportingOverflow(by: factor)
        guard !overflow else { throw .outOfRange(rule: "too large") }
        return .milliseconds(milliseconds)
    }

    /// A plain whole number (`_` may separate digits: `50_000_000`).
    func integer() throws(ConfigValueProblem) -> Int {
        let (number, unit) = try splitNumber(expected: "a whole number")
        guard unit.isEmpty else { throw .bad(expected: "a whole number without a unit") }
        return number
    }

    /// `true` or `false`, nothing else (no `yes`, `1`, `on`: one spelling, one meaning).
    func bool() throws(ConfigValueProblem) -> Bool {
        switch try requiredString() {
        case "true": return true
        case "false": return false
        default: throw .bad(expected: "true or false")
        }
    }

    /// One of swift-log's level names.
    func logLevel() throws(ConfigValueProblem) -> Logger.Level {
        guard let level = Logger.Level(rawValue: try requiredString()) else {
            throw .bad(expected: "one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return level
    }

    /// Splits `64MiB` into 64 and `MiB`. Digits may be separated by single underscores; a
    /// space may separate the number from its unit.
    private func splitNumber(expected: String) throws(ConfigValueProblem) -> (Int, String) {
        let value = try requiredString()
        let digits = value.prefix { $0.isASCII && ($0.isNumber || $0 == "_") }
        let unit = String(ConfigLexer.trimmed(value[digits.endIndex...]))
        guard let firstDigit = digits.first, firstDigit != "_", digits.last != "_", !digits.contains("__") else {
            throw .bad(expected: expected)
        }
        if unit.first == "." || unit.first == "," { throw .bad(expected: expected + " (whole numbers only)") }
        var number = 0
        for c in digits where c != "_" {
            let (shifted, o1) = number.multipliedReportingOverflow(by: 10)
            let (next, o2) = shifted.addingReportingOverflow(Int(c.asciiValue! - 48))
            guard !o1, !o2 else { throw .outOfRange(rule: "too large") }
            number = next
        }
        return (number, unit)
    }
}

/// Readers for values that are strings with a shape: paths, URLs, host names.
enum ConfigStringRules {
    /// An absolute path; `~` and `~/…` expand to `home` (the environment's `HOME`), because a
    /// daemon's working directory is not something a path in its config should depend on.
    static func absolutePath(_ value: String, home: String) throws(ConfigValueProblem) -> String {
        var path = value
        if path == "~" {
            path = home
        } else if path.hasPrefix("~/") {
            path = (home.hasSuffix("/") ? String(home.dropLast()) : home) + String(path.dropFirst())
        }
        guard path.hasPrefix("/") else { throw .bad(expected: "an absolute path (or one starting with ~/)") }
        return path
    }

    /// A URL with one of `schemes` and a host.
    static func url(_ value: String, schemes: Set<String>) throws(ConfigValueProblem) -> String {
        let expected = "a URL such as " + (schemes.contains("https") ? "https://host/path" : "http://host:port")
            + " (schemes: " + schemes.sorted().joined(separator: ", ") + ")"
        guard let components = URLComponents(string: value),
              let scheme = components.scheme?.lowercased(), schemes.contains(scheme),
              let host = components.host, !host.isEmpty
        else { throw .bad(expected: expected) }
        return value
    }

    /// A host name or IP address as `allowed_hosts` matches it: no scheme, path or port.
    static func host(_ value: String) throws(ConfigValueProblem) -> String {
        let expected = "host names or IP addresses without scheme, port or path"
        let colons = value.count(where: { $0 == ":" })
        guard !value.contains(where: { $0 == "/" || $0 == " " || $0 == "\t" || $0 == "@" || $0 == "\"" }),
              colons != 1  // one colon is host:port; IPv6 addresses have at least two
        else { throw .bad(expected: expected) }
        return value
    }

    /// A group name or numeric id, as `chown` would take it.
    static func groupName(_ value: String) throws(ConfigValueProblem) -> String {
        guard value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") }) else {
            throw .bad(expected: "a group name or numeric group id")
        }
        return value
    }
}
