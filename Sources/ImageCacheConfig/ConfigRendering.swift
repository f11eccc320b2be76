/// Values written back in cache.conf syntax, the inverse of the readers: what
/// `CacheConfiguration.description` prints parses back to the same configuration.
enum ConfigRendering {
    /// A size in the largest unit that divides it exactly (`64MiB`, `1500`).
    static func size(_ bytes: Int) -> String {
        guard bytes != 0 else { return "0" }
        for unit in ConfigUnits.sizes where unit.factor > 1 && bytes % unit.factor == 0 {
            return "\(bytes / unit.factor)\(unit.name)"
        }
        return String(bytes)
    }

    /// A duration in the largest unit that divides it exactly, to the millisecond.
    static func duration(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        guard milliseconds != 0 else { return "0s" }
        for unit in ConfigUnits.durations where milliseconds % unit.milliseconds == 0 {
            return "\(milliseconds / unit.milliseconds)\(unit.name)"
        }
        return "\(milliseconds)ms"
    }

    /// A string bare when it reads back unchanged, quoted (with escapes) otherwise.
    static func string(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.first == " " || value.last == " "
            || value.contains(where: { "#,\"\\\n\t\r=".contains($0) })
        guard needsQuotes else { return value }
        var quoted = "\""
        for c in value {
            switch c {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            default: quoted.append(c)
            }
        }
        return quoted + "\""
    }

    /// A list as comma-separated items, each quoted when needed.
    static func list(_ items: [String]) -> String {
        items.map(string).joined(separator: ", ")
    }
}
