import Foundation
import Testing
import TestSupport
@testable import ImageCacheCLI

/// `--help` and the man pages as a reader meets them: at 80 columns no command example is
/// broken, and `man -l` renders both pages within 80 columns with one EXAMPLES section.
@Suite("Help texts and man pages at 80 columns", .timeLimit(.minutes(3)))
struct HelpAndManPageTests {
    static var daemon: String {
        URL(fileURLWithPath: CLIProcess.binary).deletingLastPathComponent().appendingPathComponent("imagecached").path
    }

    /// Every command path of `imagecache`, from its own `--experimental-dump-help`.
    static func commandPaths() async throws -> [(path: [String], discussion: String)] {
        let dump = try await runTool(CLIProcess.binary, ["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var found: [([String], String)] = []
        func walk(_ command: [String: Any], path: [String]) {
            found.append((path, command["discussion"] as? String ?? ""))
            for child in command["subcommands"] as? [[String: Any]] ?? [] where child["commandName"] as? String != "help" {
                walk(child, path: path + [child["commandName"] as? String ?? "?"])
            }
        }
        walk(try #require(root["command"] as? [String: Any]), path: [])
        return found
    }

    @Test func atEightyColumnsEveryExampleLineIsPrintedWhole() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "80"
        let paths = try await Self.commandPaths()
        #expect(paths.count > 15)
        for (path, discussion) in paths {
            let help = try await runTool(CLIProcess.binary, path + ["--help"], environment: environment)
            #expect(help.status == 0, "\(path): \(help.stderr)")
            let lines = Set(help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
            for case .preformatted(let block) in DiscussionBlocks.parse(discussion) {
                for line in block { #expect(lines.contains(line), "imagecache \(path.joined(separator: " ")) --help broke: \(line)") }
            }
            #expect(help.stdout.split(separator: "\n").allSatisfy { DisplayWidth.of($0) <= 80 }, "\(path)")
        }
        let daemonHelp = try await runTool(Self.daemon, ["--help"], environment: environment)
        #expect(daemonHelp.stdout.split(separator: "\n").allSatisfy { DisplayWidth.of($0) <= 80 }, "\(daemonHelp.stdout)")
        #expect(daemonHelp.stdout.contains("imagecached --config ./cache.conf --check-config\n"))
    }

    /// Renders a page as `man -l` does at 80 columns.
    static func manPage(_ tool: String, section: Int) async throws -> String {
        let dump = try await runTool(tool, ["--experimental-dump-help"])
        let page = try await runTool(CLIProcess.binary, ["generate-manpage", "--section", String(section), "--date", "2026-11-29"],
                                     input: dump.stdout)
        #expect(page.status == 0, "\(page.stderr)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("icli-\(UUID().uuidString.prefix(8)).\(section)").path
        try page.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        var environment = ProcessInfo.processInfo.environment
        environment["MANWIDTH"] = "80"
        environment["MANPAGER"] = "cat"
        environment["PAGER"] = "cat"
        let man = try await runTool("/usr/bin/man", ["-l", file], environment: environment)
        #expect(man.status == 0, "\(man.stderr)")
        return man.stdout
    }

    @Test func bothManPagesFitEightyColumnsWithOneExamplesSection() async throws {
        for (tool, section) in [(CLIProcess.binary, 1), (Self.daemon, 8)] {
            let page = try await Self.manPage(tool, section: section)
            let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
            let wide = lines.filter { DisplayWidth.of($0) > 80 }
            #expect(wide.isEmpty, "\(tool)(\(section)) has lines over 80 columns:\n\(wide.joined(separator: "\n"))")
            #expect(lines.filter { $0 == "EXAMPLES" }.count == 1, "\(tool)(\(section))")
            #expect(lines.filter { $0 == "EXIT STATUS" }.count == 1, "\(tool)(\(section))")
            #expect(lines.count < 900, "\(tool)(\(section)) is \(lines.count) lines")
        }
        let daemon = try await Self.manPage(Self.daemon, section: 8)
        #expect(!daemon.contains("COMMANDS") && !daemon.contains("imagecached help"), "\(daemon)")
        let cli = try await Self.manPage(CLIProcess.binary, section: 1)
        // A subcommand's examples are a label inside its entry, its prose filled.
        #expect(cli.contains("Examples:"))
        #expect(cli.contains("imagecache download unsplash:Dwu85P9SOIk --detach"))
    }
}
