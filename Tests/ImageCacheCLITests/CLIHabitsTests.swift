import ArgumentParser
import Foundation
import ImageCacheProtocol
import Testing
@testable import ImageCacheCLI

/// The command-line habits that need no daemon: parsing, "did you mean", the
/// socket look-up, and the renderers' fixed widths, plurals and cuts.
@Suite("CLI habits: parsing, suggestions, socket look-up, rendering", .timeLimit(.minutes(1)))
struct CLIHabitsTests {
    func parse<C: ParsableCommand>(_ arguments: [String], as type: C.Type) throws -> C {
        let command = try ImageCacheRoot.parseAsRoot(arguments)
        return try #require(command as? C, "parsed \(Swift.type(of: command)) instead of \(C.self)")
    }

    // MARK: Parsing

    @Test func searchWordsNeedNoQuotes() throws {
        let c = try parse(["search", "red", "fox", "--page", "2"], as: SearchCommand.self)
        #expect(c.params.query == "red fox" && c.params.page == 2)
        #expect(try parse(["search", "red fox"], as: SearchCommand.self).params.query == "red fox")
        #expect(try parse(["search", "owl"], as: SearchCommand.self).params.safe)
        #expect(try !parse(["search", "owl", "--no-safe"], as: SearchCommand.self).params.safe)
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["search"]) }
    }

    @Test func cacheClearNeedsWhatAndYesForAll() throws {
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["cache", "clear"]) }
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["cache", "clear", "all"]) }
        #expect(try parse(["cache", "clear", "all", "--yes"], as: CacheCommand.Clear.self).what == .all)
        #expect(try parse(["cache", "clear", "thumbnails"], as: CacheCommand.Clear.self).what == .thumbnails)
        let message = ImageCacheRoot.message(for: CacheCommand.Clear.validationError(["cache", "clear", "all"]))
        #expect(message.contains("--yes"), "\(message)")
    }

    @Test func quietVerboseAndNDJSONAreGlobal() throws {
        let c = try parse(["-q", "search", "owls"], as: SearchCommand.self)
        #expect(c.global.verbosity == .quiet)
        #expect(try parse(["search", "owls", "-v"], as: SearchCommand.self).global.verbosity == .verbose)
        #expect(try parse(["search", "owls", "-q", "-v"], as: SearchCommand.self).global.verbosity == .quiet)
        let n = try parse(["download", "list", "--ndjson"], as: DownloadList.self)
        #expect(n.global.ndjson && n.global.jsonOutput && !n.global.json)
    }

    @Test func downloadNamesAndReplacement() throws {
        let c = try parse(["download", "unsplash:a", "-O", "beach.jpg", "--overwrite"], as: DownloadStart.self)
        #expect(c.params().first?.filename == "beach.jpg" && c.params().first?.overwrite == true)
        let safe = try parse(["download", "unsplash:a", "--filename", "b.jpg", "--overwrite", "--no-overwrite"], as: DownloadStart.self)
        #expect(safe.params().first?.overwrite == false)
        #expect(try parse(["download", "unsplash:a"], as: DownloadStart.self).params().first?.overwrite == false)
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["download", "unsplash:a", "unsplash:b", "-O", "x.jpg"]) }
    }

    @Test func prefetchTellsImagesFromWords() throws {
        #expect(try parse(["prefetch", "red", "fox"], as: PrefetchCommand.self).target() == .search("red fox"))
        let images = try parse(["prefetch", "unsplash:a", "https://x.example/b.jpg", "unsplash:a"], as: PrefetchCommand.self).target()
        #expect(images == .images([.photo("unsplash:a"), .url("https://x.example/b.jpg")], readStdin: false))
        #expect(try parse(["prefetch", "-"], as: PrefetchCommand.self).target() == .images([], readStdin: true))
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["prefetch", "unsplash:a", "fox"]) }
        #expect(try PrefetchCommand.images(fromStdin: "# ids\nunsplash:a  pixabay:2\n\nhttps://x.example/c.png\n")
                == [.photo("unsplash:a"), .photo("pixabay:2"), .url("https://x.example/c.png")])
        #expect(throws: UsageError.self) { try PrefetchCommand.images(fromStdin: "unsplash:a\nnot-an-id\n") }
    }

    // MARK: Hints by cause

    @Test func aJobIDWhereAPhotoIDIsWantedSaysWhichCommandTakesIt() throws {
        for arguments in [["show", "dl-3f9a0c41b2e7"], ["photo", "dl-3f9a0c41b2e7"], ["download", "dl-3f9a0c41b2e7"], ["cache", "evict", "dl-3f9a0c41b2e7"]] {
            do {
                _ = try ImageCacheRoot.parseAsRoot(arguments)
                Issue.record("\(arguments) parsed")
            } catch {
                let message = ImageCacheRoot.message(for: error)
                #expect(message.contains("download job id") && message.contains("download status dl-3f9a0c41b2e7"), "\(message)")
            }
        }
    }

    @Test(arguments: ["example.com:/photos", "me@host:photos", "https://host/photos", "sftp://host/x"])
    func aDestinationThatLooksLikeAHostSaysSo(destination: String) {
        do {
            _ = try ImageCacheRoot.parseAsRoot(["download", "unsplash:a", "-o", destination])
            Issue.record("\(destination) parsed")
        } catch {
            #expect(ImageCacheRoot.message(for: error).contains("looks like a host"))
        }
    }

    @Test func localDestinationsAreFolders() throws {
        for destination in ["/srv/photos", "photos", "./a:b", "~/Pictures"] {
            #expect(try parse(["download", "unsplash:a", "-o", destination], as: DownloadStart.self).output == destination)
        }
    }

    @Test func providerHintsFollowTheCause() {
        let unknown = ErrorMessage.hint(RPCError(.providerUnavailable, "unknown provider 'unsplsh' (known: unsplash, flickr, pixabay)"))
        #expect(unknown?.contains("does not exist") == true && unknown?.contains("not a key problem") == true)
        let missing = ErrorMessage.hint(RPCError(.providerUnavailable, "Flickr has no API key: set [providers.flickr] api_key in cache.conf or the FLICKR_API_KEY environment variable"))
        #expect(missing?.contains("imagecache status") == true)
        let refused = ErrorMessage.hint(RPCError(.providerUnavailable, "Unsplash refused the configured API key (check …)", status: 401))
        #expect(refused?.contains("wrong or revoked") == true)
    }

    // MARK: Did you mean

    @Test func aMistypedCommandGetsASuggestion() {
        #expect(CommandSuggestion.unknownCommand(in: ["serch", "fox"], root: ImageCacheRoot.self)?.contains("Did you mean 'search'?") == true)
        #expect(CommandSuggestion.unknownCommand(in: ["--socket", "/x.sock", "-q", "sarch"], root: ImageCacheRoot.self)?
            .contains("Did you mean 'search'?") == true)
        #expect(CommandSuggestion.unknownCommand(in: ["cache", "claer", "all"], root: ImageCacheRoot.self)?
            .contains("not a command of imagecache cache. Did you mean 'clear'?") == true)
        #expect(CommandSuggestion.unknownCommand(in: ["download", "lsit"], root: ImageCacheRoot.self)?.contains("'list'") == true)
        #expect(CommandSuggestion.unknownCommand(in: ["xyzzy"], root: ImageCacheRoot.self)?.contains("Commands: status") == true)
    }

    @Test func validCommandLinesGetNoSuggestion() {
        for line in [["search", "serch"], ["download", "unsplash:abc"], ["download", "list"], ["help", "search"], ["--help"],
                     ["cache", "clear", "all"], ["--socket", "stauts", "status"], ["--generate-completion-script", "bash"], ["download", "-o", "/tmp", "pixabay:1"], []] {
            #expect(CommandSuggestion.unknownCommand(in: line, root: ImageCacheRoot.self) == nil, "\(line)")
        }
    }

    @Test func editDistance() {
        #expect(CommandSuggestion.distance("serch", "search") == 1)
        #expect(CommandSuggestion.distance("", "abc") == 3)
        #expect(CommandSuggestion.distance("stauts", "status") == 1, "a transposition is one edit")
        #expect(CommandSuggestion.distance("claer", "clear") == 1)
        #expect(CommandSuggestion.distance("Photo", "photo") == 0)
    }

    // MARK: Socket look-up

    @Test func socketLookupOrder() throws {
        let home = NSTemporaryDirectory() + "/icsock-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/config/imagecached", withIntermediateDirectories: true)
        try Data("[daemon]\nsocket = \(home)/conf.sock\n".utf8).write(to: URL(fileURLWithPath: home + "/config/imagecached/cache.conf"))
        let environment = ["HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_RUNTIME_DIR": home + "/run"]
        let none = home + "/no-system.conf"
        #expect(SocketLookup.resolve(flag: "/f.sock", environment: environment, systemConfigPath: none).path == "/f.sock")
        var withVariable = environment
        withVariable["IMAGECACHE_SOCKET"] = "/env.sock"
        #expect(SocketLookup.resolve(flag: nil, environment: withVariable, systemConfigPath: none)
                == .init(path: "/env.sock", source: "IMAGECACHE_SOCKET"))
        let fromFile = SocketLookup.resolve(flag: nil, environment: environment, systemConfigPath: none)
        #expect(fromFile.path == home + "/conf.sock" && fromFile.source.hasPrefix("socket = in \(home)/config/imagecached/cache.conf"))
        // No file: the defaults, user socket first.
        let bare = ["HOME": home, "XDG_CONFIG_HOME": home + "/none", "XDG_RUNTIME_DIR": home + "/run"]
        #expect(SocketLookup.resolve(flag: nil, environment: bare, systemConfigPath: none, fileExists: { _ in false })
                == .init(path: home + "/run/imagecached.sock", source: "the default"))
    }

    @Test func aBrokenConfigFallsBackToTheDefaultAndSaysWhy() throws {
        let home = NSTemporaryDirectory() + "/icsock-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/imagecached", withIntermediateDirectories: true)
        try Data("[daemon]\nsockt = /x\n".utf8).write(to: URL(fileURLWithPath: home + "/imagecached/cache.conf"))
        let choice = SocketLookup.resolve(flag: nil, environment: ["HOME": home, "XDG_CONFIG_HOME": home, "XDG_RUNTIME_DIR": "/r"],
                                          systemConfigPath: home + "/none", fileExists: { _ in false })
        #expect(choice.path == "/r/imagecached.sock")
        #expect(choice.configProblem?.contains("sockt") == true, "\(String(describing: choice.configProblem))")
    }

    @Test func aSocketPathThatIsAFileOrAFolderSaysSo() throws {
        let folder = NSTemporaryDirectory() + "/icsock-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: folder + "/file"))
        #expect(SocketLookup.notASocket(folder)?.contains("is a folder, not a socket") == true)
        #expect(SocketLookup.notASocket(folder + "/file")?.contains("is a regular file, not a socket") == true)
        #expect(SocketLookup.notASocket(folder + "/missing") == nil)
    }

    // MARK: Rendering

    @Test func aPagePastTheLastNamesTheLast() {
        let past = Fixtures.page([], page: 389, totalPages: 388)
        let text = SearchTable.render(past, width: 100)
        #expect(!text.contains("page 389 of 388"), "\(text)")
        #expect(SearchTable.footer(past).contains("--page 388"))
        #expect(SearchTable.footer(Fixtures.page([], page: 2, totalPages: 1)).contains("there is 1 page"))
    }

    @Test func tablesAreNotCutWhenStdoutIsNoTerminal() {
        let long = String(repeating: "very long description ", count: 20)
        let page = Fixtures.page([Fixtures.photo("unsplash:a", description: long)])
        let pipe = Terminal(isTTY: false, width: 80)
        #expect(SearchTable.render(page, width: pipe.tableWidth).contains(long.trimmingCharacters(in: .whitespaces)))
        let tty = Terminal(isTTY: true, width: 80)
        #expect(SearchTable.render(page, width: tty.tableWidth).split(separator: "\n").allSatisfy { DisplayWidth.of($0) <= 80 })
    }

    @Test func longPathsAreCutInTheMiddle() {
        let path = "/srv/imagecached/downloads/some/deep/folder/unsplash-abc.jpg"
        let cut = DisplayWidth.truncateMiddle(path, to: 30)
        #expect(DisplayWidth.of(cut) == 30)
        #expect(cut.hasPrefix("/srv/") && cut.hasSuffix("unsplash-abc.jpg") && cut.contains("…"), "\(cut)")
        #expect(DisplayWidth.truncateMiddle(path, to: 200) == path)
        #expect(DisplayWidth.truncateMiddle(path, to: 1) == "…")
        #expect(DisplayWidth.truncateMiddle(path, to: 0).isEmpty)
    }

    @Test func jobIDsHaveOneWidth() {
        #expect(JobID.padded("dl-3f9a") == "dl-3f9a        ")
        #expect(JobID.padded("dl-3f9a0c41b2e7").count == JobID.width)
        #expect(JobID.padded("dl-3f9a0c41b2e7ffff") == "dl-3f9a0c41b2e7ffff")
        #expect(JobID.looksLikeJobID("dl-3f9a0c41b2e7") && !JobID.looksLikeJobID("dl-") && !JobID.looksLikeJobID("unsplash:dl-1"))
    }

    @Test(arguments: [60, 80, 120, 200])
    func barsKeepOneWidthFromStartToEnd(width: Int) {
        var item = ProgressItem(label: "unsplash:Dwu85P9SOIk", received: 0, total: 3_000_000, elapsed: 0)
        var widths = Set<Int>()
        for step in 0...10 {
            item.received = step * 300_000
            item.elapsed = Double(step) * 0.3
            widths.insert(DisplayWidth.of(ProgressBar.line(item, width: width)))
        }
        for outcome in ["done", "cancelled", "recycled", "failed: timeout"] {
            var ended = item
            ended.outcome = outcome
            let line = ProgressBar.line(ended, width: width)
            #expect(line.contains(outcome))
            widths.insert(DisplayWidth.of(line))
        }
        #expect(widths.count == 1, "\(widths)")
        #expect(widths.first! <= width)
    }

    @Test func ratesAppearAfterHalfASecond() {
        let early = ProgressItem(label: "a", received: 1000, total: 10_000, elapsed: 0.2)
        #expect(!ProgressBar.figures(early).contains("/s") && !ProgressBar.figures(early).contains("ETA"))
        let later = ProgressItem(label: "a", received: 1000, total: 10_000, elapsed: 0.5)
        #expect(ProgressBar.figures(later).contains("/s") && ProgressBar.figures(later).contains("ETA"))
    }

    @Test func barOutcomesNameTheCause() {
        #expect(ProgressBar.outcome(of: RPCError(.cancelled, "the slot was recycled", reason: "recycled")) == "recycled")
        #expect(ProgressBar.outcome(of: RPCError(.cancelled, "cancelled")) == "cancelled")
        #expect(ProgressBar.outcome(of: RPCError(.timeout, "stalled")) == "failed: timeout")
        #expect(ProgressBar.outcome(of: Interrupted(signal: SIGINT)) == "cancelled")
    }

    @Test func pluralsAreRight() {
        #expect(Units.count(1, "photo") == "1 photo" && Units.count(0, "photo") == "0 photos")
        #expect(Units.count(1, "entry", "entries") == "1 entry" && Units.count(2, "entry", "entries") == "2 entries")
        #expect(SearchTable.heading(Fixtures.page([], page: 1, totalPages: 0)).contains("0 results"))
        #expect(CacheSummary.render(CacheRemovalResult(removed: 2, bytes: 0), what: "x").contains("2 entries"))
    }

    @Test func photoSummaryShowsTheDetailFields() {
        var photo = Fixtures.photo("flickr:1")
        photo.tags = ["beach", "sunset"]
        photo.exif = .init(make: "Canon", model: "EOS 5D", exposureTime: "1/250", aperture: "8.0", focalLength: "35", iso: 100)
        photo.location = .init(city: "Nice", country: "France")
        photo.pageURL = "https://www.flickr.com/photos/x/1/"
        let text = PhotoSummary.render(photo)
        for part in ["author    Jane Doe", "tags      beach, sunset", "exif      Canon EOS 5D, 1/250 s, f/8.0, 35 mm, ISO 100",
                     "location  Nice, France", "page      https://www.flickr.com/photos/x/1/", "counts    250 likes"] {
            #expect(text.contains(part), "\(part) in \(text)")
        }
    }

    @Test func photoSummaryNamesEachTimeAndSaysSponsoredAndVideo() {
        var photo = Fixtures.photo("flickr:24379963431")
        photo.takenAt = "2015-12-16T10:20:30Z"
        photo.uploadedAt = "2016-01-18T16:43:27Z"
        photo.sponsored = true
        photo.sponsor = "Hillshire Farm"
        photo.media = .video
        photo.fullURL = nil
        let text = PhotoSummary.render(photo)
        for part in ["taken     2015-12-16T10:20:30Z", "uploaded  2016-01-18T16:43:27Z", "sponsored by Hillshire Farm",
                     "media     video"] {
            #expect(text.contains(part), "\(part) in \(text)")
        }
        #expect(!text.contains("full "))
        // An upload time alone is never called "taken".
        var uploadedOnly = Fixtures.photo("unsplash:a")
        uploadedOnly.uploadedAt = "2021-02-02T08:10:25Z"
        #expect(!PhotoSummary.render(uploadedOnly).contains("taken"))
    }

    @Test func photoSummaryPrintsNoControlOrBidiCharacterAProviderSent() {
        var photo = Fixtures.photo("unsplash:hostile")
        photo.sponsor = "Acme\u{1B}[2J\u{1B}]0;owned\u{07}"
        photo.tags = ["gpj.\u{202E}exe", "a\u{2066}b\u{2069}", "bell\u{07}"]
        photo.sponsored = true
        photo.description = "line one\nline two\u{9B}31m"
        let text = PhotoSummary.render(photo)
        let forbidden: Set<UInt32> = [0x1B, 0x07, 0x9B, 0x202E, 0x2066, 0x2069]
        #expect(!text.unicodeScalars.contains { forbidden.contains($0.value) }, "\(text.debugDescription)")
        #expect(text.contains("sponsored by Acme\u{FFFD}[2J\u{FFFD}]0;owned\u{FFFD}"), "\(text)")
        #expect(text.contains("tags      gpj.\u{FFFD}exe, a\u{FFFD}b\u{FFFD}, bell\u{FFFD}"), "\(text)")
        #expect(text.contains("line one line two\u{FFFD}31m"), "\(text)")
        // Each field stays on its own line: no newline a provider sent splits one.
        #expect(text.split(separator: "\n").allSatisfy { $0.first != " " })
    }
}

extension ParsableCommand {
    /// The error `validate()` throws for `arguments`, for reading its message.
    static func validationError(_ arguments: [String]) -> any Error {
        do {
            _ = try ImageCacheRoot.parseAsRoot(arguments)
            return CancellationError()
        } catch {
            return error
        }
    }
}
