import Foundation
import Testing
import TestSupport
@testable import ImageCacheCLI

/// The CLI's habits through the real `imagecache` and a real `imagecached`, stdout and
/// stderr captured apart (and stderr on a pseudo-terminal where bars are the point).
@Suite("CLI habits against a real imagecached", .serialized, .timeLimit(.minutes(5)))
struct CLIHabitsEndToEndTests {
    @Test func resultsGoToStdoutProgressToStderrAndQuietLeavesOnlyResults() async throws {
        try await LiveDaemon.with { live in
            let photos = try await live.photoIDs()
            let shown = try await live.cli(["show", photos[0], "--size", "180"])
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(shown.stdout.split(separator: "\n").map { String($0.prefix(8)) } == ["photo   ", "path    ", "size    ", "source  "],
                    "\(shown.stdout)")
            #expect(shown.stderr.contains("\(photos[0]): done 100%"), "\(shown.stderr)")
            let quiet = try await live.cli(["-q", "show", photos[1], "--size", "180"])
            #expect(quiet.status == 0)
            #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
            #expect(quiet.stdout.contains("path    "))
            let verbose = try await live.cli(["stats", "-v"])
            #expect(verbose.stderr.contains("socket \(live.socket) (--socket)") && verbose.stderr.contains("done in"), "\(verbose.stderr)")
            #expect(!verbose.stdout.contains("socket \(live.socket)"))
        }
    }

    @Test func onAPseudoTerminalBarsRedrawInPlaceAtOneWidthAndEndDone() async throws {
        try await LiveDaemon.with { live in
            let photos = try await live.photoIDs()
            let result = try await live.cli(["show", photos[2], "--size", "320"], stderrTerminal: 90)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stdout.contains("\u{1B}"), "stdout is a pipe: no escapes there")
            let draws = result.stderr.components(separatedBy: "\r\u{1B}[2K").dropFirst()
            #expect(!draws.isEmpty, "no in-place redraw: \(result.stderr.debugDescription)")
            let lines = draws.map { $0.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? "" }
            #expect(Set(lines.map { DisplayWidth.of($0) }).count == 1, "bars of several widths: \(lines)")
            #expect(lines.allSatisfy { DisplayWidth.of($0) <= 89 })
            #expect(lines.last?.contains("done") == true, "\(lines)")
        }
    }

    @Test func searchWordsWithoutQuotesAndNDJSONOnePhotoPerLine() async throws {
        try await LiveDaemon.with { live in
            let quoted = try await live.cli(["search", "mountain lake", "--json"])
            let unquoted = try await live.cli(["search", "mountain", "lake", "--ndjson"])
            #expect(unquoted.status == 0, "\(unquoted.stderr)")
            let page = try jsonObject(quoted.stdout)
            let lines = unquoted.stdout.split(separator: "\n")
            #expect(lines.count == (page["photos"] as? [Any])?.count)
            let ids = try lines.map { try #require(jsonObject(String($0))["id"] as? String) }
            #expect(ids == (page["photos"] as? [[String: Any]])?.compactMap { $0["id"] as? String })
            let past = try await live.cli(["search", "mountain", "lake", "--page", "999"])
            #expect(past.status == 0)
            #expect(!past.stdout.contains("page 999 of"), "\(past.stdout)")
        }
    }

    @Test func theSocketComesFromTheEnvironmentOrCacheConf() async throws {
        try await LiveDaemon.with { live in
            let home = live.paths.workspace + "/home"
            try FileManager.default.createDirectory(atPath: home + "/config/imagecached", withIntermediateDirectories: true)
            let base = ["PATH": "/usr/bin:/bin", "HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_RUNTIME_DIR": home + "/run"]
            var withVariable = base
            withVariable["IMAGECACHE_SOCKET"] = live.socket
            let fromVariable = try await live.cliFinding(["status"], environment: withVariable)
            #expect(fromVariable.status == 0, "\(fromVariable.stderr)")
            #expect(fromVariable.stdout.contains("at \(live.socket)"))
            try Data("[daemon]\nsocket = \"\(live.socket)\"\n".utf8)
                .write(to: URL(fileURLWithPath: home + "/config/imagecached/cache.conf"))
            let fromFile = try await live.cliFinding(["status", "-v"], environment: base)
            #expect(fromFile.status == 0, "\(fromFile.stderr)")
            #expect(fromFile.stderr.contains("socket = in \(home)/config/imagecached/cache.conf"), "\(fromFile.stderr)")
            let folder = try await live.cliFinding(["status", "--socket", home], environment: base)
            #expect(folder.status == 69)
            #expect(folder.stderr.contains("is a folder, not a socket"), "\(folder.stderr)")
            let file = try await live.cliFinding(["status", "--socket", home + "/config/imagecached/cache.conf"], environment: base)
            #expect(file.status == 69)
            #expect(file.stderr.contains("is a regular file, not a socket"), "\(file.stderr)")
        }
    }

    @Test func photoShowsDetailsAndAJobIDGetsAHint() async throws {
        try await LiveDaemon.with { live in
            let photo = try #require(try await live.photoIDs().first)
            let result = try await live.cli(["photo", photo])
            #expect(result.status == 0, "\(result.stderr)")
            for label in ["photo     \(photo)", "author    ", "full      http"] { #expect(result.stdout.contains(label), "\(label): \(result.stdout)") }
            let json = try jsonObject(try await live.cli(["photo", photo, "--json"]).stdout)
            #expect(json["id"] as? String == photo)
            let job = try await live.cli(["photo", "dl-3f9a0c41b2e7"])
            #expect(job.status == 64)
            #expect(job.stderr.contains("download job id"), "\(job.stderr)")
        }
    }

    @Test func prefetchReadsIdsFromStdin() async throws {
        try await LiveDaemon.with { live in
            let photos = Array(try await live.photoIDs().prefix(3))
            let result = try await live.cli(["prefetch", "-", "--size", "120"], stdin: "# from a search\n" + photos.joined(separator: "\n") + "\n")
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("prefetched 3 of 3 images"), "\(result.stdout)")
            let again = try await live.cli(["show", photos[1], "--size", "120", "--json"])
            #expect(try jsonObject(again.stdout)["source"] as? String == "memory")
        }
    }

    @Test func downloadNamesItsFileAndOverwritesOnlyWhenAsked() async throws {
        try await LiveDaemon.with { live in
            let photo = try #require(try await live.photoIDs().first)
            let first = try await live.cli(["download", photo, "-O", "chosen.jpg", "--json"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect((try jsonArray(first.stdout).first?["path"] as? String)?.hasSuffix("/chosen.jpg") == true, "\(first.stdout)")
            let kept = try await live.cli(["download", photo, "-O", "chosen.jpg", "--json"])
            #expect((try jsonArray(kept.stdout).first?["path"] as? String)?.hasSuffix("/chosen (1).jpg") == true, "\(kept.stdout)")
            let replaced = try await live.cli(["download", photo, "--filename", "chosen.jpg", "--overwrite", "--json"])
            #expect((try jsonArray(replaced.stdout).first?["path"] as? String)?.hasSuffix("/chosen.jpg") == true, "\(replaced.stdout)")
            #expect(live.downloadedFiles() == ["chosen (1).jpg", "chosen.jpg"])
            let host = try await live.cli(["download", photo, "-o", "backup.example.com:/photos"])
            #expect(host.status == 64)
            #expect(host.stderr.contains("looks like a host"))
        }
    }

    @Test func detachedStartPrintsFixedWidthJobIDsOnStdoutAndTheHintsOnStderr() async throws {
        try await LiveDaemon.with { live in
            let photo = try #require(try await live.photoIDs().first)
            let result = try await live.cli(["download", photo, "--detach"])
            #expect(result.status == 0, "\(result.stderr)")
            let line = try #require(result.stdout.split(separator: "\n").first)
            #expect(line.hasPrefix("dl-") && line.dropFirst(JobID.width).hasPrefix("  \(photo)"), "\(line)")
            #expect(result.stderr.contains("download watch"))
            let job = String(line.prefix(JobID.width))
            _ = try await live.cli(["download", "watch", job])
        }
    }

    @Test func aMistypedCommandGetsDidYouMeanAndCacheClearAllNeedsYes() async throws {
        let typo = try await withTimeout(seconds: 60) { try await CLIProcess.run(["serch", "red", "fox"]) }
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("Did you mean 'search'?"), "\(typo.stderr)")
        let clear = try await withTimeout(seconds: 60) { try await CLIProcess.run(["cache", "clear", "all", "--socket", "/nonexistent.sock"]) }
        #expect(clear.status == 64)
        #expect(clear.stderr.contains("--yes"))
    }
}
