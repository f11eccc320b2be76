import Foundation

/// A man page (roff, `man(7)` macros) rendered from an argument parser's command tree, as
/// `--experimental-dump-help` prints it: the same text as `--help`, so the pages never drift
/// from the commands. One renderer for `imagecache(1)` and `imagecached(8)`; the package has
/// no man-page plugin, and this needs nothing but the JSON.
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
        var page = ".TH \(escape(name.uppercased())) \(section) \"\(date)\" \"imagecached\" \"imagecached manual\"\n"
        page += ".SH NAME\n\(escape(name)) \\- \(escape(root.abstract ?? ""))\n"
        page += ".SH SYNOPSIS\n.B \(escape(name))\n" + escape(synopsis(root)) + "\n"
        if let discussion = root.discussion, !discussion.isEmpty { page += body(discussion, heading: "DESCRIPTION") }
        page += options(root.arguments ?? [], heading: "OPTIONS")
        let visible = (root.subcommands ?? []).filter { $0.shouldDisplay != false }
        if !visible.isEmpty {
            page += ".SH COMMANDS\n"
            for command in visible { page += subcommand(command, path: [name]) }
        }
        return page
    }

    static func subcommand(_ command: Command, path: [String]) -> String {
        let full = (path + [command.commandName]).joined(separator: " ")
        var text = ".SS \(escape(full))\n"
        if let abstract = command.abstract { text += escape(abstract) + "\n" }
        text += ".PP\n.B \(escape(full))\n" + escape(synopsis(command)) + "\n"
        if let discussion = command.discussion, !discussion.isEmpty { text += ".PP\n" + preformatted(discussion) }
        text += options(command.arguments ?? [], heading: nil)
        for child in (command.subcommands ?? []) where child.shouldDisplay != false {
            text += subcommand(child, path: path + [command.commandName])
        }
        return text
    }

    static func synopsis(_ command: Command) -> String {
        (command.arguments ?? []).filter { $0.shouldDisplay != false }.map { argument -> String in
            var word = label(argument)
            if argument.isRepeating == true { word += " ..." }
            return argument.isOptional == true ? "[\(word)]" : word
        }.joined(separator: " ") + ((command.subcommands ?? []).isEmpty ? "" : " <subcommand>")
    }

    static func label(_ argument: Argument) -> String {
        let value = argument.valueName.map { "<\($0)>" } ?? ""
        guard argument.kind != "positional", let names = argument.names, !names.isEmpty else { return value }
        let spelled = names.map { ($0.kind == "long" ? "--" : "-") + $0.name }.joined(separator: ", ")
        return argument.kind == "option" ? "\(spelled) \(value)" : spelled
    }

    static func options(_ arguments: [Argument], heading: String?) -> String {
        let shown = arguments.filter { $0.shouldDisplay != false }
        guard !shown.isEmpty else { return "" }
        var text = heading.map { ".SH \($0)\n" } ?? ".PP\nOptions:\n"
        for argument in shown {
            text += ".TP\n.B \(escape(label(argument)))\n"
            text += escape(argument.abstract ?? "") + "\n"
            if let discussion = argument.discussion, !discussion.isEmpty { text += escape(discussion) + "\n" }
        }
        return text
    }

    /// A discussion: its text as `--help` lays it out (examples and tables are aligned by
    /// spaces), so it is kept preformatted; capitalised lines alone become sub-headings.
    static func body(_ discussion: String, heading: String) -> String {
        ".SH \(heading)\n" + preformatted(discussion)
    }

    static func preformatted(_ text: String) -> String {
        var out = ".nf\n"
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if !trimmed.isEmpty, trimmed == trimmed.uppercased(), trimmed.rangeOfCharacter(from: .letters) != nil, !line.hasPrefix(" ") {
                out += ".fi\n.SH \(escape(trimmed))\n.nf\n"
            } else {
                out += escape(String(line)) + "\n"
            }
        }
        return out + ".fi\n"
    }

    /// Text safe for roff: backslashes doubled, a leading `.` or `'` kept from being a request,
    /// and `-` written as the ASCII hyphen-minus so options can be searched and pasted.
    static func escape(_ text: String) -> String {
        var out = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}
