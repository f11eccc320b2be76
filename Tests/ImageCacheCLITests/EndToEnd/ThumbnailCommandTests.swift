import Foundation
import Testing
import TestSupport
@testable import ImageCacheCLI

/// `show`, `prefetch`, `layout` and `cache`: the real `imagecache` against a real daemon's
/// `thumbnail.show`, `prefetch`, `layout`, `cache.evict` and `cache.clear`.
@Suite("show, prefetch, layout and cache against a real imagecached", .timeLimit(.minutes(5)))
struct ThumbnailCommandTests {
    @Test func showFetchesFromTheNetworkThenAnswersFromMemory() async throws {
        try await LiveDaemon.with { live in
            let photo = try #require(try await live.photoIDs().first)
            let first = try await live.cli(["show", photo, "--size", "200"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("photo   \(photo)"))
            #expect(first.stdout.contains("source  network (downloaded now)"))
            let path = try #require(first.stdout.split(separator: "\n").first { $0.hasPrefix("path    ") }).dropFirst(8)
            #expect(FileManager.default.fileExists(atPath: String(path)))
            let again = try await live.cli(["show", photo, "--size", "200", "--json"])
            #expect(again.status == 0, "\(again.stderr)")
            let result = try jsonObject(again.stdout)
            #expect(result["source"] as? String == "memory")
            #expect((result["width"] as? Int).map { $0 >= 200 && $0 < 400 } == true, "\(result)")
        }
    }

    @Test func onATerminalShowRedrawsItsBarInPlaceAndInAPipeItWritesPlainLines() async throws {
        try await LiveDaemon.with { live in
            let photos = try await live.photoIDs()
            // script(1) gives the command a pseudo-terminal, as a person's shell would.
            let command = "\(CLIProcess.binary) --socket \(live.socket) show \(photos[0]) --size 300"
            let tty = try await withTimeout(seconds: 90) { try await runCapturing("/usr/bin/script", ["-qec", command, "/dev/null"]) }
            #expect(tty.status == 0, "\(tty.output)")
            #expect(tty.output.contains("\u{1B}[2K"), "no in-place redraw: \(tty.output)")
            #expect(tty.output.contains("] done 100%"))
            let piped = try await live.cli(["show", photos[1], "--size", "300"])
            #expect(piped.status == 0)
            #expect(!piped.stderr.contains("\u{1B}["))
            // Progress is narration: stderr; stdout holds the result alone.
            #expect(piped.stderr.contains("\(photos[1]): done 100%"))
            #expect(!piped.stdout.contains("100%"))
        }
    }

    @Test func aFailureWithJSONIsAnErrorObjectOnStdout() async throws {
        try await LiveDaemon.with { live in
            let result = try await live.cli(["show", "unsplash:never-searched", "--json"])
            #expect(result.status == 15)
            let error = try #require(try jsonObject(result.stdout)["error"] as? [String: Any])
            #expect(error["code"] as? Int == 1006)
            #expect((error["data"] as? [String: Any])?["kind"] as? String == "not_found")
        }
    }

    @Test func showOfAPhotoNoSearchReturnedExits15() async throws {
        try await LiveDaemon.with { live in
            let result = try await live.cli(["show", "unsplash:never-searched"])
            #expect(result.status == 15, "\(result.stderr)")
            #expect(result.stderr.contains("not_found"))
            #expect(result.stderr.contains("Photo ids come from a search"))
        }
    }

    @Test func showOfAForbiddenURLExits19() async throws {
        try await LiveDaemon.with { live in
            let result = try await live.cli(["show", "http://10.1.2.3/a.jpg"])
            #expect(result.status == 19, "\(result.stderr)")
            #expect(result.stderr.contains("forbidden"))
        }
    }

    @Test func prefetchWarmsThePageSoShowIsACacheHit() async throws {
        try await LiveDaemon.with { live in
            let result = try await live.cli(["prefetch", "mountain lake", "--per-page", "6", "--size", "120"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("prefetched 6 of 6 images"), "\(result.stdout)")
            let photo = try #require(try await live.photoIDs().first)
            let shown = try jsonObject(try await live.cli(["show", photo, "--size", "120", "--json"]).stdout)
            #expect(["memory", "disk"].contains(shown["source"] as? String), "\(shown)")
        }
    }

    @Test func layoutPrintsTheFramesAndWritesAnSVGWithTheThumbnails() async throws {
        try await LiveDaemon.with { live in
            let svg = live.paths.workspace + "/grid.svg"
            let result = try await live.cli(["layout", "mountain lake", "--columns", "3", "--width", "600", "--spacing", "6", "--svg", svg])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.first?.hasPrefix("PHOTO") == true)
            #expect(lines.contains { $0.hasPrefix("column heights: ") })
            let frames = lines.filter { $0.contains("unsplash:") }
            #expect(!frames.isEmpty)
            // The thumbnails drawn for the SVG recorded every photo's decoded size.
            let text = try String(contentsOfFile: svg, encoding: .utf8)
            #expect(text.hasPrefix("<svg") || text.hasPrefix("<?xml"))
            #expect(text.components(separatedBy: "<image").count - 1 == frames.count)
            #expect(result.stderr.contains("\(frames.count) thumbnails embedded"))
            let again = try jsonObject(try await live.cli(["layout", "mountain lake", "--columns", "3", "--width", "600", "--json"]).stdout)
            let dims = ((again["frames"] as? [[String: Any]]) ?? []).compactMap { $0["dims"] as? String }
            // Each decoded copy agrees with the size the simulator's API stated, so every frame
            // is placed by the photo's own size (docs/protocol.md, "Dimensions").
            #expect(!dims.isEmpty && dims.allSatisfy { $0 == "provider" }, "\(dims)")
        }
    }

    @Test func layoutWithoutThumbnailsUsesTheProvidersSizesAndDrawsRectangles() async throws {
        try await LiveDaemon.with { live in
            let svg = live.paths.workspace + "/plain.svg"
            let result = try await live.cli(["layout", "red fox", "--per-page", "6", "--columns", "2", "--width", "400",
                                             "--svg", svg, "--no-thumbnails"])
            #expect(result.status == 0, "\(result.stderr)")
            let frames = result.stdout.split(separator: "\n").filter { $0.hasPrefix("unsplash:") }
            #expect(frames.count == 6)
            #expect(frames.allSatisfy { $0.hasSuffix("provider") }, "\(frames)")
            let text = try String(contentsOfFile: svg, encoding: .utf8)
            #expect(!text.contains("<image"))
            #expect(text.components(separatedBy: "<rect").count - 1 >= 6)
        }
    }

    @Test func cacheClearSearchesSendsTheNextSearchBackToTheProvider() async throws {
        try await LiveDaemon.with { live in
            func fromCache() async throws -> Bool? {
                try jsonObject(try await live.cli(["search", "red fox", "--json"]).stdout)["fromCache"] as? Bool
            }
            #expect(try await fromCache() == false)
            #expect(try await fromCache() == true)
            let cleared = try await live.cli(["cache", "clear", "searches"])
            #expect(cleared.status == 0, "\(cleared.stderr)")
            #expect(cleared.stdout.hasPrefix("cleared searches: ") && !cleared.stdout.contains(": 0 entries"), "\(cleared.stdout)")
            #expect(try await fromCache() == false)
        }
    }

    @Test func cacheEvictRemovesAShownPhotoAndClearEmptiesTheRest() async throws {
        try await LiveDaemon.with { live in
            let photos = try await live.photoIDs()
            for photo in photos.prefix(2) {
                #expect(try await live.cli(["show", photo, "--size", "100"]).status == 0)
            }
            let evicted = try await live.cli(["cache", "evict", photos[0]])
            #expect(evicted.status == 0, "\(evicted.stderr)")
            #expect(evicted.stdout.hasPrefix("evicted \(photos[0]): "))
            #expect(!evicted.stdout.contains(": 0 entries"), "\(evicted.stdout)")
            let shown = try jsonObject(try await live.cli(["show", photos[0], "--size", "100", "--json"]).stdout)
            #expect(shown["source"] as? String == "network")
            let cleared = try jsonObject(try await live.cli(["cache", "clear", "thumbnails", "--json"]).stdout)
            #expect((cleared["removed"] as? Int ?? 0) >= 2, "\(cleared)")
            let stats = try jsonObject(try await live.cli(["stats", "--json"]).stdout)
            #expect((stats["memory"] as? [String: Any])?["entries"] != nil, "\(stats)")
        }
    }
}

/// Runs a program to its end and returns its exit status and everything it wrote (stdout
/// and stderr, merged).
func runCapturing(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    let outcome = try await runTool(executable, arguments, mergeOutput: true, seconds: 90)
    return (outcome.status, outcome.stdout)
}
