import Foundation
import Glibc
import ImageCacheClient
import NIOConcurrencyHelpers
import ProviderSimulator
import Testing
import TestSupport
@testable import ImageCacheCLI

/// The papercuts a demanding user finds, through the real `imagecache` and a real daemon:
/// what a bar and a message say when things stop half-way, `-q`, `--per-page`, the job
/// table, `-O DIR/NAME` and `--no-clobber`.
@Suite("CLI papercuts against a real imagecached", .timeLimit(.minutes(5)))
struct PapercutEndToEndTests {
    static let body = SyntheticImages.jpeg(width: 320, height: 240, seed: 11)

    @Test func ctrlCEndsTheBarSayingCancelled() async throws {
        try await LiveDaemon.with { live in
            live.images.serve("/i.jpg", body: Self.body, faults: [.held])
            let url = live.images.url("/i.jpg")
            let (pids, pidFeed) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
            let run = Task { try await live.cli(["download", url]) { _, pid in pidFeed.yield(pid) } }
            var pid: Int32 = 0
            for await first in pids { pid = first; break }
            try await withTimeout(seconds: 60) { try await live.images.waitUntil { $0.requests("/i.jpg") >= 1 } }
            #expect(kill(pid, SIGINT) == 0)
            let result = try await run.value
            #expect(result.status == 130, "\(result.stderr)")
            // The bar's last line (a pipe: plain lines) ends it, before the interrupt's message.
            let lines = result.stderr.split(separator: "\n").map(String.init)
            let last = try #require(lines.lastIndex { $0.hasPrefix("\(url): ") }, "\(result.stderr)")
            #expect(lines[last].hasPrefix("\(url): cancelled"), "\(result.stderr)")
            let message = try #require(lines.firstIndex { $0.contains("interrupted; cancelled 1 unfinished job") })
            #expect(last < message)
            live.images.release("/i.jpg")
        }
    }

    @Test func aDaemonGoneWhileFollowingNamesTheSocketAndTheJobs() async throws {
        // The test stops the daemon itself (`LiveDaemon.with` would expect its own stop to be
        // the clean one); the rest is removed whatever happens.
        try await finishing(try await LiveDaemon.start(), with: { _ = await $0.stop() }) { live in
            live.images.serve("/g.jpg", body: Self.body, faults: [.held])
            let url = live.images.url("/g.jpg")
            let run = Task { try await live.cli(["download", url]) }
            try await withTimeout(seconds: 60) { try await live.images.waitUntil { $0.requests("/g.jpg") >= 1 } }
            let connection = try await live.connect()
            let job = try #require(try await connection.downloads().jobs.first?.job)
            await connection.close()
            // SIGTERM: the daemon leaves the running job unfinished and closes every connection.
            let stopped = await live.daemon.stop()
            let result = try await run.value
            live.images.release("/g.jpg")
            #expect(stopped == 0)
            #expect(result.status == ExitStatus.protocolError.rawValue, "\(result.stderr)")
            #expect(result.stderr.contains("imagecached at \(live.socket) closed while following download job \(job)"), "\(result.stderr)")
            #expect(result.stderr.contains("`imagecache --socket \(live.socket) download status \(job)`"), "\(result.stderr)")
        }
    }

    @Test func quietSearchPrintsTheRowsAndATooLargePageIsSaidToBeClamped() async throws {
        try await LiveDaemon.with { live in
            let ids = try await live.photoIDs()
            let quiet = try await live.cli(["-q", "search", "mountain", "lake"])
            #expect(quiet.status == 0, "\(quiet.stderr)")
            let rows = quiet.stdout.split(separator: "\n")
            #expect(rows.map { String($0.prefix { $0 != " " }) } == ids, "\(quiet.stdout)")
            #expect(!quiet.stdout.contains("page 1 of") && !quiet.stdout.contains(" · "), "\(quiet.stdout)")
            let big = try await live.cli(["search", "mountain", "lake", "--per-page", "500", "--json"])
            #expect(big.status == 0, "\(big.stderr)")
            let used = try #require(try jsonObject(big.stdout)["perPage"] as? Int)
            #expect(used < 500)
            #expect(big.stderr.contains("--per-page 500 is beyond") && big.stderr.contains("clamped to \(used), its maximum"), "\(big.stderr)")
        }
    }

    @Test func anUnknownJobSpeaksOfJobsAndACancelledOneShowsNoMissingFile() async throws {
        try await LiveDaemon.with { live in
            let unknown = try await live.cli(["download", "status", "dl-000000000000"])
            #expect(unknown.status == 15)
            #expect(unknown.stderr.contains("imagecache download list") && !unknown.stderr.contains("Photo ids"), "\(unknown.stderr)")

            live.images.serve("/c.jpg", body: Self.body, faults: [.held])
            let started = try await live.cli(["download", live.images.url("/c.jpg"), "--detach", "--json"])
            let job = try #require(try jsonArray(started.stdout).first?["job"] as? String)
            try await withTimeout(seconds: 60) { try await live.images.waitUntil { $0.requests("/c.jpg") >= 1 } }
            #expect(try await live.cli(["download", "cancel", job]).status == 0)
            let status = try await live.cli(["download", "status", job])
            #expect(status.stdout.contains("folder    \(live.downloads) (not saved)"), "\(status.stdout)")
            #expect(!status.stdout.contains("c.jpg\n") && !status.stdout.contains("path "), "\(status.stdout)")
            live.images.release("/c.jpg")
        }
    }

    @Test func aFolderInTheFileNameIsAFolderAndNoClobberIsRefused() async throws {
        try await LiveDaemon.with { live in
            live.images.serve("/n.jpg", body: Self.body)
            let saved = try await live.cli(["download", live.images.url("/n.jpg"), "-o", live.downloads, "-O", "sub/b.jpg", "--json"])
            #expect(saved.status == 0, "\(saved.stderr)")
            #expect(try jsonArray(saved.stdout).first?["path"] as? String == live.downloads + "/sub/b.jpg", "\(saved.stdout)")
            #expect(FileManager.default.fileExists(atPath: live.downloads + "/sub/b.jpg"))
            #expect(!live.downloadedFiles().contains("sub_b.jpg"))
            // Milliseconds in JSON, a real duration in the summary.
            let seconds = try #require(try jsonArray(saved.stdout).first?["seconds"] as? Double)
            #expect((seconds * 1000).rounded() == seconds * 1000, "\(seconds)")
            let text = try await live.cli(["download", live.images.url("/n.jpg"), "-O", "again.jpg"])
            #expect(!text.stdout.contains("in 0s"), "\(text.stdout)")
            let refused = try await live.cli(["download", live.images.url("/n.jpg"), "--no-clobber"])
            #expect(refused.status == 64, "\(refused.stderr)")
            #expect(refused.stderr.contains("--no-clobber") && refused.stderr.contains("name (1).jpg"), "\(refused.stderr)")
        }
    }

    /// The bash completion, sourced in a real bash and asked as bash asks it on Tab: paths
    /// still complete for `--socket`, `-o` and `--svg`, providers for `--provider`, and job
    /// ids from the daemon the command line names.
    @Test func theBashCompletionCompletesPathsProvidersAndJobIDs() async throws {
        try await LiveDaemon.with { live in
            let dir = live.paths.workspace + "/complete"
            try FileManager.default.createDirectory(atPath: dir + "/subfolder", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: dir + "/grid.svg", contents: Data()))
            let script = try await CLIProcess.run(["--generate-completion-script", "bash"])
            #expect(script.status == 0)
            let scriptPath = live.paths.workspace + "/imagecache.bash"
            try script.stdout.write(toFile: scriptPath, atomically: true, encoding: .utf8)
            live.images.serve("/j.jpg", body: Self.body, faults: [.held])
            let started = try await live.cli(["download", live.images.url("/j.jpg"), "--detach", "--json"])
            let job = try #require(try jsonArray(started.stdout).first?["job"] as? String)

            func complete(_ words: [String]) async throws -> [String] {
                let quoted = ([CLIProcess.binary] + words).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
                let line = ([CLIProcess.binary] + words).joined(separator: " ")
                let shell = """
                source '\(scriptPath)'
                COMP_WORDS=(\(quoted.joined(separator: " ")))
                COMP_CWORD=\(words.count)
                COMP_LINE='\(line)'
                COMP_POINT=${#COMP_LINE}
                _imagecache '\(CLIProcess.binary)' "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '%s\\n' "${COMPREPLY[@]}"
                """
                let outcome = try await runTool("/bin/bash", ["-c", shell], seconds: 30)
                #expect(outcome.status == 0, "\(outcome.stderr)")
                return outcome.stdout.split(separator: "\n").map(String.init)
            }
            #expect(try await complete(["--socket", dir + "/gr"]) == [dir + "/grid.svg"])
            #expect(try await complete(["download", "x", "-o", dir + "/sub"]) == [dir + "/subfolder"])
            #expect(try await complete(["download", "start", "x", "-o", dir + "/sub"]) == [dir + "/subfolder"])
            #expect(try await complete(["download", "-o", dir + "/sub"]) == [dir + "/subfolder"])
            #expect(try await complete(["download", "st"]) == ["start", "status"])
            #expect(try await complete(["layout", "beach", "--svg", dir + "/gr"]) == [dir + "/grid.svg"])
            #expect(try await complete(["search", "fox", "--provider", "fl"]) == ["flickr"])
            #expect(try await complete(["search", "fox", "--provider", ""]).sorted() == ["flickr", "pixabay", "unsplash"])
            let jobs = try await complete(["--socket", live.socket, "download", "status", "dl-"])
            #expect(jobs == [job], "\(jobs)")
            live.images.release("/j.jpg")
        }
    }
}
