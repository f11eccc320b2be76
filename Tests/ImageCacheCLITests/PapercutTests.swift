import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheProtocol
import Testing
@testable import ImageCacheCLI

/// The CLI's small habits a demanding user of wget, cp and git notices: durations, hints,
/// tables at 80 columns, `-O` with a folder, `--no-clobber`, `-q`, help texts that fit.
@Suite("CLI papercuts", .timeLimit(.minutes(2)))
struct PapercutTests {
    func parse<C: ParsableCommand>(_ arguments: [String], as type: C.Type) throws -> C {
        let command = try ImageCacheRoot.parseAsRoot(arguments)
        return try #require(command as? C, "parsed \(Swift.type(of: command)) instead of \(C.self)")
    }

    @Test func aDurationUnderASecondIsShownInMillisecondsAndJSONSecondsAreRounded() throws {
        #expect(Units.duration(0.26088882999999896) == "261 ms")
        #expect(Units.duration(0) == "0 ms")
        #expect(Units.duration(0.9996) == "1s")
        #expect(Units.duration(42) == "42s")
        let outcome = DownloadOutcome(image: "unsplash:a", job: "dl-1", path: "/d/a.jpg", bytes: 10, seconds: 0.26088882999999896)
        #expect(outcome.seconds == 0.261)
        let json = try JSONOutput.text([outcome])
        #expect(json.contains("\"seconds\" : 0.261"), "\(json)")
        let summary = DownloadSummary.render([outcome])
        #expect(summary.contains("in 261 ms") && !summary.contains("in 0s"), "\(summary)")
    }

    @Test func anUnknownJobsHintSpeaksOfJobsNotPhotoIDs() {
        let job = ErrorMessage.render(RPCError(.notFound, "no download job dl-000000000000"))
        #expect(job.contains("imagecache download list"), "\(job)")
        #expect(!job.contains("Photo ids"), "\(job)")
        let photo = ErrorMessage.render(RPCError(.notFound, "unknown photo id unsplash:nope"))
        #expect(photo.contains("Photo ids come from a search"))
    }

    @Test func aClampedPageSizeIsSaidWithTheProvidersBound() {
        let page = SearchResult(query: "beach", provider: "unsplash", page: 1, perPage: 30, total: 60, totalPages: 2,
                                hasMore: true, photos: [], fromCache: false, stale: false)
        #expect(SearchCommand.perPageNote(asked: 500, result: page) == "--per-page 500 is beyond unsplash's range: clamped to 30, its maximum")
        #expect(SearchCommand.perPageNote(asked: 1, result: page)?.contains("its minimum") == true)
        #expect(SearchCommand.perPageNote(asked: 30, result: page) == nil)
        #expect(SearchCommand.perPageNote(asked: nil, result: page) == nil)
    }

    @Test func quietSearchOutputIsTheRowsAlone() {
        let result = Fixtures.page([Fixtures.photo("unsplash:a"), Fixtures.photo("unsplash:b")])
        let rows = SearchTable.resultRows(result, width: 100)
        #expect(rows.count == 2)
        #expect(rows[0].hasPrefix("unsplash:a") && rows[1].hasPrefix("unsplash:b"))
        #expect(SearchTable.resultRows(Fixtures.page([]), width: 100).isEmpty)
    }

    static func job(_ state: DownloadState, path: String?, error: RPCError? = nil) -> DownloadJob {
        DownloadJob(job: "dl-3f9a0c41b2e7", photo: "unsplash:Dwu85P9SOIk", url: nil, variant: .full, state: state, path: path,
                    received: 2_831_155, total: 2_831_155, error: error, createdAt: "2026-11-21T14:00:00Z")
    }

    @Test func downloadListAt80ColumnsKeepsTheFileNameAndItsFolders() {
        let path = "/home/someone-with-a-long-name/Downloads/fox.jpg"
        let table = DownloadJobTable.render([Self.job(.finished, path: path)], width: 80)
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 80 }, "\(table)")
        #expect(lines[1].hasSuffix("…/Downloads/fox.jpg"), "\(table)")
        #expect(DisplayWidth.truncatePath(path, to: 200) == path)
        #expect(DisplayWidth.truncatePath(path, to: 12) == "…/fox.jpg")
        #expect(DisplayWidth.truncatePath("/d/a-very-long-file-name.jpg", to: 10) == "…-name.jpg")
    }

    @Test func aCancelledJobShowsTheFolderItWasGoingToNotAMissingFile() {
        let cancelled = Self.job(.cancelled, path: "/home/me/Downloads/fox.jpg", error: RPCError(.cancelled, "the job was cancelled"))
        let described = DownloadJobTable.describe(cancelled)
        #expect(described.contains("folder    /home/me/Downloads (not saved)"), "\(described)")
        #expect(!described.contains("fox.jpg"), "\(described)")
        var noError = cancelled
        noError.error = nil
        #expect(DownloadJobTable.render([noError], width: 200).contains("not saved, folder /home/me/Downloads"))
        #expect(!DownloadJobTable.render([noError], width: 200).contains("fox.jpg"))
        #expect(DownloadJobTable.describe(Self.job(.finished, path: "/d/fox.jpg")).contains("path      /d/fox.jpg"))
    }

    @Test func aSlashInTheFileNameIsAFolderAndAName() throws {
        let into = try parse(["download", "unsplash:a", "-O", "a/b.jpg", "-o", "/srv/photos"], as: DownloadStart.self)
        #expect(into.params().first?.directory == "/srv/photos/a")
        #expect(into.params().first?.filename == "b.jpg")
        let here = try parse(["download", "unsplash:a", "-O", "a/b.jpg"], as: DownloadStart.self)
        #expect(here.params(currentDirectory: "/home/me").first?.directory == "/home/me/a")
        let absolute = try parse(["download", "unsplash:a", "-O", "/srv/p/b.jpg"], as: DownloadStart.self)
        #expect(absolute.params().first?.directory == "/srv/p" && absolute.params().first?.filename == "b.jpg")
        let bare = try parse(["download", "unsplash:a", "-O", "b.jpg"], as: DownloadStart.self)
        #expect(bare.params().first?.directory == nil && bare.params().first?.filename == "b.jpg")
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["download", "unsplash:a", "-O", "a/"]) }
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["download", "unsplash:a", "-O", "/x/b.jpg", "-o", "/y"]) }
    }

    @Test func noClobberIsRefusedRatherThanMeaningTheDefaultAndNoOverwriteUndoesOverwrite() throws {
        do {
            _ = try ImageCacheRoot.parseAsRoot(["download", "unsplash:a", "--no-clobber"])
            Issue.record("--no-clobber was accepted")
        } catch {
            let message = ImageCacheRoot.message(for: error)
            #expect(message.contains("not available") && message.contains("name (1).jpg"), "\(message)")
        }
        let undone = try parse(["download", "unsplash:a", "--overwrite", "--no-overwrite"], as: DownloadStart.self)
        #expect(undone.params().first?.overwrite == false)
        #expect(try parse(["download", "unsplash:a", "--overwrite"], as: DownloadStart.self).params().first?.overwrite == true)
    }

    /// Every command's help, walked from the root: no indented line (an example, a table row)
    /// wider than `DiscussionBlocks.maximumWidth`, so `--help` at 80 columns never breaks one.
    @Test func noExampleLineIsTooWideForAnEightyColumnTerminalOrAManPage() {
        func walk(_ command: any ParsableCommand.Type, path: String) -> [String] {
            let configuration = command.configuration
            let name = path + " " + (configuration.commandName ?? "?")
            let own = DiscussionBlocks.overlongLines(in: configuration.discussion).map { "\(name): \($0)" }
            return own + configuration.subcommands.flatMap { walk($0, path: name) }
        }
        let overlong = walk(ImageCacheRoot.self, path: "")
        #expect(overlong.isEmpty, "\(overlong.joined(separator: "\n"))")
    }

    @Test func aLongUsageLineIsBrokenAtWordsUnderTheCommand() {
        let usage = "USAGE: imagecache search [--socket <path>] [--json] [--ndjson] [--quiet] [--verbose] [<word> ...] [--provider <provider>]"
        let fitted = HelpLayout.fit(usage + "\n  imagecache search red fox", width: 60).split(separator: "\n").map(String.init)
        #expect(fitted.allSatisfy { DisplayWidth.of($0) <= 60 }, "\(fitted)")
        #expect(fitted[0].hasPrefix("USAGE: imagecache search") && fitted[1].hasPrefix("         ["), "\(fitted)")
        #expect(fitted.last == "  imagecache search red fox")
        #expect(fitted.joined(separator: " ").split(separator: " ") == (usage + " imagecache search red fox").split(separator: " "))
        #expect(HelpLayout.asksForHelp(["download", "--help"]) && HelpLayout.asksForHelp(["help", "search"]))
        #expect(!HelpLayout.asksForHelp(["search", "--", "--help"]))
        func named(_ words: [String]) -> ObjectIdentifier { ObjectIdentifier(HelpLayout.command(for: words, root: ImageCacheRoot.self)) }
        #expect(named(["--socket", "/x", "download", "status", "--help"]) == ObjectIdentifier(DownloadStatus.self))
        #expect(named(["help", "search"]) == ObjectIdentifier(SearchCommand.self))
        #expect(named(["--help"]) == ObjectIdentifier(ImageCacheRoot.self))
    }

    @Test func discussionsSplitIntoHeadingsParagraphsAndExamples() {
        let blocks = DiscussionBlocks.parse("One line\nand its end.\n\nEXAMPLES\n  imagecache a\n  imagecache b\n")
        #expect(blocks == [.paragraph("One line and its end."), .heading("EXAMPLES"), .preformatted(["  imagecache a", "  imagecache b"])])
        #expect(DiscussionBlocks.label("EXIT STATUS") == "Exit status:")
    }

    @Test func theFollowersLossNamesTheSocketTheJobsAndTheCommandToSeeThem() {
        let lost = FollowedJobsLost(socketPath: "/run/x.sock", jobs: ["dl-1", "dl-2"],
                                    statusCommand: DownloadHints.command("status", jobs: ["dl-1", "dl-2"], socket: "/run/x.sock"))
        let text = ErrorMessage.render(lost)
        #expect(text.contains("imagecached at /run/x.sock closed while following download jobs dl-1, dl-2"), "\(text)")
        #expect(text.contains("`imagecache --socket /run/x.sock download status dl-1 dl-2`"), "\(text)")
        #expect(ExitStatus(error: lost) == .protocolError)
    }

    @Test func aStreamThatEndsFirstIsReportedWithTheSocketAndTheOpenJobs() async throws {
        let (stream, feed) = AsyncStream.makeStream(of: ServerNotification.self)
        feed.yield(.downloadFinished(DownloadFinished(job: "dl-1", path: "/d/a.jpg", bytes: 10, width: 1, height: 1)))
        feed.finish()
        let follower = DownloadFollower(jobs: [("a", "dl-1"), ("b", "dl-2")], terminal: Terminal(isTTY: false, width: 80),
                                        quiet: true, socketPath: "/run/user/1000/imagecached.sock", socketFlag: nil)
        do {
            _ = try await follower.follow(stream)
            Issue.record("the follower did not report the closed connection")
        } catch let lost as FollowedJobsLost {
            #expect(lost.socketPath == "/run/user/1000/imagecached.sock")
            #expect(lost.jobs == ["dl-2"])
            #expect(lost.statusCommand == "imagecache download status dl-2")
        }
    }

    @Test func theBashScriptHandsAnUnknownDownloadWordToStart() {
        let script = Completions.bashScript()
        #expect(script.contains("# `download PHOTO...` is `download start PHOTO...`, the default subcommand"))
        #expect(script.contains("_imagecache_download_start\n"))
    }

    @Test func completionsKnowTheProvidersAndReadTheSocketOffTheLine() {
        #expect(Completions.providers == ["unsplash", "flickr", "pixabay"])
        #expect(Completions.socketFlag(in: ["imagecache", "--socket", "/a.sock", "download", "status", ""]) == "/a.sock")
        #expect(Completions.socketFlag(in: ["imagecache", "download", "status", "--socket=/b.sock", ""]) == "/b.sock")
        #expect(Completions.socketFlag(in: ["imagecache", "download", "status", ""]) == nil)
    }
}
