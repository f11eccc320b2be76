import Foundation

/// A man page (roff, `man(7)` macros) rendered from an argument parser's command tree, as
/// `--experimental-dump-help` prints it: the same text as `--help`, so the pages never drift
/// from the commands. One renderer for `imagecache(1)` and `imagecached(8)`; the package has
/// no man-page plugin, and this needs nothing but the JSON.
///
/// The help texts are written for `--help` (`DiscussionBlocks` reads their shape): prose is
/// filled here, as `man` fills it to the reader's width, and only indented lines (examples,
/// tables) stay as written, which the help texts keep within `DiscussionBlocks.maximumWidth`
/// so that they fit an 80-column page whole. The root's sections (EXAMPLES, EXIT STATUS,
/// ENVIRONMENT…) are the page's sections, once each; a subcommand's headings are labels
/// inside its entry under COMMANDS, not sections of their own.
public enum ManPage {
    /// A command of the dump: its name, texts, arguments and subcommands.
    struct Command: Decodable {
        var commandName: String
        var abstract: String?
        var discussion: String?
        var arguments: [Argument]?
        var subcommands: [Command]?
        var shouldDisplay: Bool?
    }

    /// One option, flag or positional argument of the dump.
    struct Argument: Decodable {
        struct Name: Decodable {
            var kind: String
            var name: String
        }
        var kind: String
        var names: [Name]?
        var valueName: String?
        var abstract: String?
        var discussion: String?
        var isOptional: Bool?
        var isRepeating: Bool?
        var shouldDisplay: Bool?
    }

    struct Dump: Decodable { var command: Command }

    /// The page for the dump's root command in manual `section`.
    public static func render(dumpJSON: Data, section: Int, date: String) throws -> String {
        let root = try JSONDecoder().decode(Dump.self, from: dumpJSON).command
        let name = root.commandName
        // Left-adjusted and unhyphenated: paths and option names stay whole, as typed.
        var page = ".TH \(escape(name.uppercased())) \(section) \"\(date)\" \"imagecached\" \"imagecached manual\"\n.nh\n.ad l\n"
        page += ".SH NAME\n\(escape(name)) \\- \(escape(root.abstract ?? ""))\n"
        page += ".SH SYNOPSIS\n.B \(escape(name))\n" + escape(synopsis(root, shared: [])) + "\n"
        let blocks = DiscussionBlocks.parse(root.discussion ?? "")
        let firstHeading = blocks.firstIndex { if case .heading = $0 { return true } else { return false } } ?? blocks.endIndex
        if firstHeading > 0 { page += ".SH DESCRIPTION\n" + roff(blocks[..<firstHeading], headingsAreSections: true) }
        page += options(root.arguments ?? [], heading: "OPTIONS", shared: [])
        // The root's options are every command's (`GlobalOptions`): said once, above, not
        // again under each command.
        let shared = Set((root.arguments ?? []).filter { $0.kind != "positional" }.map(label))
        let visible = shown(root.subcommands ?? [])
        if !visible.isEmpty {
            page += ".SH COMMANDS\n"
            if !shared.isEmpty {
                page += "Every command also takes the options above; each entry lists only its own.\n"
            }
            for command in visible { page += subcommand(command, path: [name], shared: shared) }
        }
        page += roff(blocks[firstHeading...], headingsAreSections: true)
        return page
    }

    /// The subcommands worth a page entry: displayed ones, and not the parser's own `help`
    /// when it is the only one (a command without subcommands answers `help` with an error).
    static func shown(_ commands: [Command]) -> [Command] {
        let displayed = commands.filter { $0.shouldDisplay != false }
        return displayed.allSatisfy { $0.commandName == "help" } ? [] : displayed
    }

    static func subcommand(_ command: Command, path: [String], shared: Set<String>) -> String {
        let full = (path + [command.commandName]).joined(separator: " ")
        var text = ".SS \(escape(full))\n"
        if let abstract = command.abstract { text += escape(abstract) + "\n" }
        text += ".PP\n.B \(escape(full))\n" + escape(synopsis(command, shared: shared)) + "\n"
        text += roff(DiscussionBlocks.parse(command.discussion ?? "")[...], headingsAreSections: false)
        text += options(command.arguments ?? [], heading: nil, shared: shared)
        for child in shown(command.subcommands ?? []) {
            text += subcommand(child, path: path + [command.commandName], shared: shared)
        }
        return text
    }

    static func synopsis(_ command: Command, shared: Set<String>) -> String {
        (command.arguments ?? []).filter { $0.shouldDisplay != false && !shared.contains(label($0)) }.map { argument -> String in
            var word = label(argument)
            if argument.isRepeating == true { word += " ..." }
            return argument.isOptional == true ? "[\(word)]" : word
        }.joined(separator: " ") + (shown(command.subcommands ?? []).isEmpty ? "" : " <subcommand>")
    }

    static func label(_ argument: Argument) -> String {
        let value = argument.valueName.map { "<\($0)>" } ?? ""
        guard argument.kind != "positional", let names = argument.names, !names.isEmpty else { return value }
        let spelled = names.map { ($0.kind == "long" ? "--" : "-") + $0.name }.joined(separator: ", ")
        return argument.kind == "option" ? "\(spelled) \(value)" : spelled
    }

    static func options(_ arguments: [Argument], heading: String?, shared: Set<String>) -> String {
        let shown = arguments.filter { $0.shouldDisplay != false && !shared.contains(label($0)) }
        guard !shown.isEmpty else { return "" }
        var text = heading.map { ".SH \($0)\n" } ?? ".PP\nOptions:\n"
        for (index, argument) in shown.enumerated() {
            // A flag and its inversion (`--overwrite`, `--no-overwrite`) share one text: one entry.
            if index > 0, shown[index - 1].abstract == argument.abstract, argument.kind == "flag" { continue }
            var labels = [label(argument)]
            if index + 1 < shown.count, shown[index + 1].abstract == argument.abstract, argument.kind == "flag" {
                labels.append(label(shown[index + 1]))
            }
            text += ".TP\n.B \(escape(labels.joined(separator: ", ")))\n"
            text += escape(argument.abstract ?? "") + "\n"
            if let discussion = argument.discussion, !discussion.isEmpty { text += escape(filled(discussion)) + "\n" }
        }
        return text
    }

    /// Blocks as roff: paragraphs filled, indented lines kept as written (`.nf`), headings as
    /// sections (the root's) or as bold labels inside a command's entry.
    static func roff(_ blocks: ArraySlice<DiscussionBlocks.Block>, headingsAreSections: Bool) -> String {
        var out = ""
        var afterLabel = false
        for block in blocks {
            switch block {
            case .heading(let title):
                if headingsAreSections {
                    out += ".SH \(escape(title))\n"
                } else {
                    out += ".PP\n.B \(escape(DiscussionBlocks.label(title)))\n"
                    afterLabel = true
                    continue
                }
            case .paragraph(let text):
                out += (afterLabel ? ".br\n" : ".PP\n") + escape(text) + "\n"
            case .preformatted(let lines):
                out += (afterLabel ? "" : ".PP\n") + ".nf\n" + lines.map { escape($0) + "\n" }.joined() + ".fi\n"
            }
            afterLabel = false
        }
        return out
    }

    /// Text whose lines were broken for `--help`, joined back into one line for roff to fill.
    static func filled(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    /// Text safe for roff: backslashes doubled, a leading `.` or `'` kept from being a request,
    /// and `-` written as the ASCII hyphen-minus so options can be searched and pasted.
    static func escape(_ text: String) -> String {
        var out = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}
