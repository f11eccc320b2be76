import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `--help` fitted to the terminal. The argument parser fills the texts to the width but
/// prints a `USAGE:` line whole, however long (a command with a dozen options makes 200
/// columns, which the terminal then breaks anywhere); those lines are broken here at word
/// boundaries, continued under the command. Lines that fit, the examples among them
/// (`DiscussionBlocks.maximumWidth`), are left as printed.
public enum HelpLayout {
    /// The width help is laid out for: the terminal's (stdout), else `COLUMNS`, else 80, as
    /// the argument parser decides it.
    public static func width(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        if isatty(STDOUT_FILENO) == 1 {
            var size = winsize()
            if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        }
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        return 80
    }

    /// `text` with every line wider than `width` broken at spaces: a `USAGE:` line continues
    /// under the command's name, another line under its own indentation plus two.
    public static func fit(_ text: String, width: Int) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let line = String(line)
            guard DisplayWidth.of(line) > width else { return line }
            let leading = line.prefix { $0 == " " }.count
            let indent = line.hasPrefix("USAGE: ") ? "USAGE: ".count + 2 : leading + 2
            return wrap(line, width: width, continuation: String(repeating: " ", count: indent))
        }.joined(separator: "\n")
    }

    /// One line broken at spaces into lines of at most `width` columns (a single word wider
    /// than that stays whole on its own line).
    static func wrap(_ line: String, width: Int, continuation: String) -> String {
        let leading = String(line.prefix { $0 == " " })
        var lines: [String] = []
        var current = leading
        for word in line.dropFirst(leading.count).split(separator: " ") {
            let candidate = current.trimmingCharacters(in: .whitespaces).isEmpty ? current + word : current + " " + word
            if DisplayWidth.of(candidate) > width, !current.trimmingCharacters(in: .whitespaces).isEmpty {
                lines.append(current)
                current = continuation + word
            } else {
                current = candidate
            }
        }
        lines.append(current)
        return lines.joined(separator: "\n")
    }

    /// Whether the words ask for help (`-h`, `--help`, `help …`) before any `--`.
    static func asksForHelp(_ arguments: [String]) -> Bool {
        if arguments.first == "help" { return true }
        for word in arguments {
            if word == "--" { return false }
            if word == "-h" || word == "--help" { return true }
        }
        return false
    }

    /// The command whose help the words ask for: the subcommand names among them, in order
    /// from the root (other words, option values among them, are passed over).
    static func command(for arguments: [String], root: any ParsableCommand.Type) -> any ParsableCommand.Type {
        var command = root
        for word in arguments where !word.hasPrefix("-") {
            if let child = command.configuration.subcommands.first(where: {
                $0._commandName == word || $0.configuration.aliases.contains(word)
            }) {
                command = child
            }
        }
        return command
    }

    /// Prints the help `arguments` ask for, fitted, and exits 0; returns when they ask for
    /// none, leaving the rest to the parser.
    static func printHelpIfAsked<Root: ParsableCommand>(_ arguments: [String], root: Root.Type) {
        guard asksForHelp(arguments) else { return }
        let columns = width()
        let target = command(for: arguments, root: root)
        let text = fit(Root.helpMessage(for: target, includeHidden: false, columns: columns), width: columns)
        Output.out(text.hasSuffix("\n") ? text : text + "\n")
        Foundation.exit(0)
    }
}
