/// How many terminal columns text takes, and how to cut it to a width.
///
/// `String.count` counts grapheme clusters, but a terminal gives East Asian wide characters
/// and emoji two columns and combining marks none; a table padded by `count` comes out
/// ragged as soon as a description holds "日本" or "🌅". This follows wcwidth's rules closely
/// enough for tables: a cluster is 2 columns when its first scalar is East Asian wide/full
/// width or has emoji presentation (or carries VS16), 0 for controls, else 1.
public enum DisplayWidth {
    /// Columns of one grapheme cluster.
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.properties.generalCategory == .control || first.properties.generalCategory == .format { return 0 }
        if scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        if first.properties.isEmojiPresentation || isWide(first.value) { return 2 }
        return 1
    }

    /// `text` safe to print on one line of a terminal: newlines and tabs become spaces, and
    /// every other control character and every bidirectional override or isolate becomes
    /// U+FFFD. Descriptions, names and tags come from providers: an escape sequence in one
    /// could clear the screen or rewrite what was printed before it, and a right-to-left
    /// override could make a file name read as another.
    public static func printable(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for character in text {
            if character.isNewline || character == "\t" {
                out.append(" ")
                continue
            }
            for scalar in character.unicodeScalars {
                switch scalar.value {
                case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                    out.append("\u{FFFD}")
                default:
                    out.append(scalar.properties.generalCategory == .control ? "\u{FFFD}" : scalar)
                }
            }
        }
        return String(out)
    }

    /// Columns of a whole string.
    public static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// `text` cut to at most `width` columns, ending with "…" when something was cut.
    /// Newlines and tabs become spaces first, so one description stays on one table row.
    public static func truncate(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        let flat = printable(text)
        if of(flat) <= width { return flat }
        var result = ""
        var used = 0
        for character in flat {
            let w = of(character)
            if used + w > width - 1 { break }
            result.append(character)
            used += w
        }
        return result + "…"
    }

    /// `text` cut to at most `width` columns in its middle (`/srv/imag…/unsplash-abc.jpg`),
    /// so a path keeps the root that says where and the file name that says what. The end
    /// gets three quarters; a file name longer than that keeps its end.
    public static func truncateMiddle(_ text: String, to width: Int) -> String {
        let flat = printable(text)
        if of(flat) <= width { return flat }
        guard width > 1 else { return width == 1 ? "…" : "" }
        let available = width - 1
        let tailBudget = available - available / 4
        var tail = ""
        var used = 0
        for character in flat.reversed() {
            let w = of(character)
            if used + w > tailBudget { break }
            tail.insert(character, at: tail.startIndex)
            used += w
        }
        var head = ""
        for character in flat {
            let w = of(character)
            if used + w > available { break }
            head.append(character)
            used += w
        }
        return head + "…" + tail
    }

    /// A path cut to at most `width` columns from its start, whole folders first:
    /// `/home/me/Downloads/fox.jpg` at 20 columns is `…/Downloads/fox.jpg`. The file name is
    /// what a reader looks for, so it goes last to be cut (then it keeps its end, the
    /// extension): never `…g` while there are columns for more.
    public static func truncatePath(_ path: String, to width: Int) -> String {
        let flat = printable(path)
        if of(flat) <= width { return flat }
        guard width > 1 else { return width == 1 ? "…" : "" }
        var parts = flat.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var kept = parts.removeLast()
        if of(kept) + 1 > width {
            var tail = ""
            var used = 0
            for character in kept.reversed() {
                let w = of(character)
                if used + w > width - 1 { break }
                tail.insert(character, at: tail.startIndex)
                used += w
            }
            return "…" + tail
        }
        while let folder = parts.last, of(folder) + 1 + of(kept) + 2 <= width {
            kept = folder + "/" + kept
            parts.removeLast()
        }
        return "…/" + kept
    }

    /// `text` padded with spaces to exactly `width` columns (cut first when wider).
    public static func pad(_ text: String, to width: Int, alignRight: Bool = false) -> String {
        let cut = truncate(text, to: width)
        let fill = String(repeating: " ", count: max(0, width - of(cut)))
        return alignRight ? fill + cut : cut + fill
    }

    /// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth.txt, W and F, condensed).
    private static func isWide(_ v: UInt32) -> Bool {
        switch v {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
             0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
