import ArgumentParser
import ImageCacheProtocol
import Testing
@testable import ImageCacheCLI

@Suite("Argument parsing of every command", .timeLimit(.minutes(1)))
struct ArgumentParsingTests {
    func parse<C: ParsableCommand>(_ arguments: [String], as type: C.Type) throws -> C {
        let command = try ImageCacheRoot.parseAsRoot(arguments)
        return try #require(command as? C, "parsed \(Swift.type(of: command)) instead of \(C.self)")
    }

    @Test func statusTakesSocketAndJSON() throws {
        let c = try parse(["status", "--socket", "/tmp/s.sock", "--json"], as: StatusCommand.self)
        #expect(c.global.socket == "/tmp/s.sock")
        #expect(c.global.json)
    }

    @Test func globalOptionsMayComeBeforeTheCommand() throws {
        let c = try parse(["--socket", "/tmp/s.sock", "--json", "stats"], as: StatsCommand.self)
        #expect(c.global.socket == "/tmp/s.sock")
        #expect(c.global.json)
    }

    @Test func socketDefaultsToTheClientsDefaultPath() throws {
        let c = try parse(["stats"], as: StatsCommand.self)
        #expect(c.global.socket == nil)
        #expect(c.global.socketPath(environment: ["XDG_RUNTIME_DIR": "/nonexistent-run"]) == "/nonexistent-run/imagecached.sock")
    }

    @Test func searchBuildsItsParams() throws {
        let c = try parse(["search", "sunset beach", "--provider", "pixabay", "--page", "2", "--per-page", "50"], as: SearchCommand.self)
        #expect(c.params == SearchParams(query: "sunset beach", provider: "pixabay", page: 2, perPage: 50))
    }

    @Test func searchRecentAsksForTheFeed() throws {
        let c = try parse(["search", "--recent", "--provider", "flickr"], as: SearchCommand.self)
        #expect(c.params.feed == .recent)
        #expect(c.params.query == nil)
    }

    @Test(arguments: [["search"], ["search", "beach", "--recent"], ["search", "beach", "--page", "0"], ["search", "beach", "--per-page", "0"]])
    func searchRefusesBadCombinations(arguments: [String]) {
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(arguments) }
    }

    @Test func showTellsPhotoIdsFromURLs() throws {
        let byID = try parse(["show", "unsplash:abc", "--size", "512", "--inline"], as: ShowCommand.self)
        #expect(byID.params == ThumbnailShowParams(slot: 0, image: .photo("unsplash:abc"), size: 512, inline: true))
        let byURL = try parse(["show", "https://images.example/a.jpg"], as: ShowCommand.self)
        #expect(byURL.params.image == .url("https://images.example/a.jpg"))
    }

    @Test func showRefusesASizeOutOfRange() {
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["show", "unsplash:a", "--size", "0"]) }
    }

    @Test func prefetchTakesPages() throws {
        let c = try parse(["prefetch", "forest", "--pages", "3", "--provider", "pixabay"], as: PrefetchCommand.self)
        #expect(try c.target() == .search("forest") && c.pages == 3 && c.provider == "pixabay")
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["prefetch", "forest", "--pages", "0"]) }
    }

    @Test func downloadTakesSeveralImagesAFolderAndAVariant() throws {
        let c = try parse(["download", "unsplash:a", "https://x.example/b.jpg", "-o", "photos", "--variant", "regular", "--detach"],
                          as: DownloadStart.self)
        let params = c.params(currentDirectory: "/home/me")
        #expect(params == [
            DownloadParams(image: .photo("unsplash:a"), variant: .regular, directory: "/home/me/photos"),
            DownloadParams(image: .url("https://x.example/b.jpg"), variant: .regular, directory: "/home/me/photos"),
        ])
        #expect(c.detach)
    }

    @Test func downloadWithoutFolderLetsTheDaemonChoose() throws {
        let c = try parse(["download", "pixabay:1"], as: DownloadStart.self)
        #expect(c.params(currentDirectory: "/x") == [DownloadParams(image: .photo("pixabay:1"))])
    }

    @Test func downloadRefusesNoImagesAndUnknownVariants() {
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["download"]) }
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["download", "a:b", "--variant", "huge"]) }
    }

    @Test func downloadStartIsAlsoSpelledOut() throws {
        let c = try parse(["download", "start", "unsplash:a", "-o", "/srv/p"], as: DownloadStart.self)
        #expect(c.params() == [DownloadParams(image: .photo("unsplash:a"), directory: "/srv/p")])
    }

    @Test func downloadJobSubcommandsTakeJobIds() throws {
        #expect(try parse(["download", "status", "j1", "j2", "--json"], as: DownloadStatus.self).ids.jobs == ["j1", "j2"])
        #expect(try parse(["download", "watch", "j1"], as: DownloadWatch.self).ids.jobs == ["j1"])
        #expect(try parse(["download", "cancel", "j1"], as: DownloadCancel.self).ids.jobs == ["j1"])
        #expect(try parse(["download", "list", "--active"], as: DownloadList.self).active)
        #expect(try parse(["--socket", "/tmp/s.sock", "download", "list"], as: DownloadList.self).global.socket == "/tmp/s.sock")
    }

    @Test(arguments: ["status", "watch", "cancel"])
    func downloadJobSubcommandsRefuseNoJob(subcommand: String) {
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["download", subcommand]) }
    }

    @Test func downloadHelpListsTheSubcommandsAndTheirExitStatus() {
        let help = DownloadCommand.helpMessage(columns: 120)
        for word in ["start", "status", "list", "watch", "cancel", "EXIT STATUS", "download list --json"] {
            #expect(help.contains(word), "\(word)")
        }
    }

    @Test func layoutTakesColumnsWidthAndSVG() throws {
        let c = try parse(["layout", "beach", "--columns", "3", "--width", "900", "--spacing", "8", "--svg", "g.svg"], as: LayoutCommand.self)
        #expect(c.columns == 3 && c.width == 900 && c.spacing == 8 && c.svg == "g.svg")
    }

    @Test(arguments: [["layout", "beach", "--width", "900"], ["layout", "beach", "--columns", "0", "--width", "900"],
                      ["layout", "beach", "--columns", "3", "--width", "0"], ["layout", "beach", "--columns", "3", "--width", "10", "--spacing", "5"]])
    func layoutRefusesImpossibleGrids(arguments: [String]) {
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(arguments) }
    }

    @Test func cacheClearTakesWhatAndHasNoDefault() throws {
        #expect(try parse(["cache", "clear", "thumbnails"], as: CacheCommand.Clear.self).what == .thumbnails)
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["cache", "clear"]) }
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["cache", "clear", "everything"]) }
    }

    @Test func cacheEvictTakesAPhotoOrURL() throws {
        #expect(try parse(["cache", "evict", "flickr:1", "--json"], as: CacheCommand.Evict.self).image == "flickr:1")
    }

    @Test func demoTakesItsOptions() throws {
        let c = try parse(["demo", "--daemon", "/opt/imagecached", "--svg", "/tmp/g.svg", "--start-timeout", "5", "--json"], as: DemoCommand.self)
        #expect(c.daemon == "/opt/imagecached" && c.svg == "/tmp/g.svg" && c.startTimeout == 5 && c.global.json)
    }

    @Test func galleryTakesAPortAndNoOpen() throws {
        let g = try parse(["gallery", "--port", "8099", "--no-open", "--socket", "/tmp/x.sock"], as: GalleryCommand.self)
        #expect(g.options.port == 8099 && g.options.noOpen && g.global.socket == "/tmp/x.sock")
        let d = try parse(["demo", "--gallery", "--no-open"], as: DemoCommand.self)
        #expect(d.gallery && d.galleryOptions.noOpen && d.galleryOptions.port == 0)
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["gallery", "--port", "70000"]) }
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["gallery", "--port", "-1"]) }
    }

    @Test func everyCommandsHelpHasExamples() {
        for command in [StatusCommand.self, StatsCommand.self, SearchCommand.self, ShowCommand.self, PrefetchCommand.self,
                        DownloadCommand.self, DownloadStart.self, DownloadStatus.self, DownloadList.self, DownloadWatch.self,
                        DownloadCancel.self, LayoutCommand.self, CacheCommand.self, DemoCommand.self,
                        GalleryCommand.self] as [any ParsableCommand.Type] {
            #expect(command.configuration.discussion.contains("EXAMPLES"), "\(command)")
        }
    }

    @Test func anUnknownCommandIsAUsageError() {
        #expect(throws: (any Error).self) { try ImageCacheRoot.parseAsRoot(["frobnicate"]) }
    }
}
