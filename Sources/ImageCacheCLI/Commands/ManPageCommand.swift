import ArgumentParser
import Foundation

/// `imagecache generate-manpage`: hidden; `scripts/install` pipes each tool's
/// `--experimental-dump-help` into it to write imagecache(1) and imagecached(8).
public struct ManPageCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "generate-manpage",
        abstract: "Render a man page from --experimental-dump-help JSON on stdin.",
        discussion: """
        EXAMPLES
          imagecache --experimental-dump-help |
            imagecache generate-manpage --section 1 > imagecache.1
          imagecached --experimental-dump-help |
            imagecache generate-manpage --section 8 > imagecached.8
        """,
        shouldDisplay: false)

    @Option(help: "The manual section (1 for imagecache, 8 for imagecached).")
    public var section: Int = 1

    @Option(help: "The date in the page's footer (default: today, or SOURCE_DATE_EPOCH for reproducible builds).")
    public var date: String?

    public init() {}

    public func run() throws {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        let when = date ?? Self.today(environment: ProcessInfo.processInfo.environment)
        do {
            Output.out(try ManPage.render(dumpJSON: input, section: section, date: when))
        } catch {
            throw ValidationError("stdin is not --experimental-dump-help JSON: \(error)")
        }
    }

    static func today(environment: [String: String]) -> String {
        let seconds = environment["SOURCE_DATE_EPOCH"].flatMap(Double.init) ?? Date().timeIntervalSince1970
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }
}
