import Foundation

/// The shape of a command's help text (`discussion`), as every command writes it: prose
/// paragraphs at the margin, headings in capitals (`EXAMPLES`), and indented lines (command
/// examples, tables) that must stay whole.
///
/// The argument parser fills prose to the terminal's width but breaks an over-long indented
/// line like any other, in the middle of a command; so indented lines are kept within
/// `maximumWidth` (checked by the tests for every command), which also lets the man page
/// print them unfilled on an 80-column page.
public enum DiscussionBlocks {
    /// The widest indented line: 80 columns less the 7 a man page indents its text by.
    public static let maximumWidth = 73

    /// One part of a help text.
    public enum Block: Equatable, Sendable {
        /// A line in capitals at the margin: `EXAMPLES`, `EXIT STATUS`.
        case heading(String)
        /// Lines at the margin, joined with spaces.
        case paragraph(String)
        /// Indented lines, as written.
        case preformatted([String])
    }

    /// The blocks of `text`, in order; blank lines separate paragraphs.
    public static func parse(_ text: String) -> [Block] {
        var blocks: [Block] = []
        var paragraph: [String] = []
        var indented: [String] = []
        func flush() {
            if !paragraph.isEmpty { blocks.append(.paragraph(paragraph.joined(separator: " "))) }
            if !indented.isEmpty { blocks.append(.preformatted(indented)) }
            paragraph = []
            indented = []
        }
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty {
                flush()
            } else if line.hasPrefix(" ") {
                if !paragraph.isEmpty { flush() }
                indented.append(line)
            } else if isHeading(trimmed) {
                flush()
                blocks.append(.heading(trimmed))
            } else {
                if !indented.isEmpty { flush() }
                paragraph.append(trimmed)
            }
        }
        flush()
        return blocks
    }

    /// Whether a line at the margin is a heading: letters, all capitals.
    static func isHeading(_ line: String) -> Bool {
        line == line.uppercased() && line.contains { $0.isLetter }
    }

    /// `EXIT STATUS` → `Exit status:`, the label a heading becomes inside a command's entry.
    public static func label(_ heading: String) -> String {
        heading.prefix(1) + heading.dropFirst().lowercased() + ":"
    }

    /// Indented lines wider than `maximumWidth` in `text`: each would be broken by `--help`
    /// at 80 columns or overflow the man page.
    public static func overlongLines(in text: String) -> [String] {
        parse(text).flatMap { block -> [String] in
            guard case .preformatted(let lines) = block else { return [] }
            return lines.filter { DisplayWidth.of($0) > maximumWidth }
        }
    }
}
