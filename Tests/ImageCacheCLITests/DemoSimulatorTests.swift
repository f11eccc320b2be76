import DaemonChild
import Foundation
import Glibc
import ImageCacheSupport
import Testing
import TestSupport
@testable import ImageCacheCLI

/// The demo's simulator as the demo runs it: `imagecache-simulator`, built beside this test
/// bundle as beside `imagecache`, started as a child, its announced servers answering over
/// real HTTP, and its ends (SIGTERM, its stdin closing when the parent is gone) clean.
@Suite("Demo simulator process", .timeLimit(.minutes(2)))
struct DemoSimulatorTests {
    @Test("it announces both servers, which answer, and SIGTERM ends it with status 0")
    func announcesServesAndStops() async throws {
        let simulator = try await DemoSimulator.start(timeout: 60 * timeoutScale)
        var stopped = false
        defer { if !stopped { simulator.process.kill() } }
        let api = try #require(URL(string: simulator.baseURL)?.port, "\(simulator.baseURL)")
        let images = try #require(URL(string: simulator.imagesURL)?.port, "\(simulator.imagesURL)")
        #expect(simulator.baseURL.hasPrefix("http://127.0.0.1:") && simulator.imagesURL.hasPrefix("http://127.0.0.1:"))
        #expect(simulator.logURL == simulator.baseURL + "/_log")

        let picture = try await RawHTTP.get(port: images, "/img/16x12/7.jpg", headers: [("Host", "127.0.0.1")])
        #expect(picture.status == 200)
        #expect(Array(picture.body.prefix(2)) == [0xFF, 0xD8], "not a JPEG")
        let log = try await RawHTTP.get(port: api, "/_log", headers: [("Host", "127.0.0.1")])
        #expect(log.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(log.body)) as? [String: Any], "\(log.text)")
        let arrivals = (object["images"] as? [String: Any])?["arrivals"] as? [String]
        #expect(arrivals == ["/img/16x12/7.jpg"], "\(log.text)")

        stopped = true
        #expect(await simulator.shutdown(), "\(simulator.process.logTail())")
        #expect(simulator.process.exitStatus == 0)
    }

    @Test("with --watch-stdin it exits with status 0 when its stdin ends, as when its parent dies")
    func exitsWhenStdinEnds() async throws {
        let path = try DemoSimulator.locate()
        let stdin = try CloseOnExecPipe()
        let stdout = try CloseOnExecPipe()
        let child = try ChildProcess(path, arguments: ["--watch-stdin"], environment: [], stdin: .descriptor(stdin.read),
                                     stdout: .descriptor(stdout.write), stderr: .discard)
        defer { child.signal(SIGKILL) }
        close(stdin.read)
        close(stdout.write)
        let announced = PipeDrain(stdout.read)
        // The parent's end of the pipe closes, as the kernel closes it when the parent dies.
        close(stdin.write)
        #expect(await child.exit(within: 60 * timeoutScale) == 0)
        let line = await announced.text(within: 10 * timeoutScale)
        #expect(line.hasPrefix("{\"api\":\"http://127.0.0.1:") && line.hasSuffix("}\n"), "\(line)")
    }

    @Test("with --watch-stdin on a pipe left non-blocking it waits for the pipe's end instead of taking EAGAIN for it")
    func nonBlockingStdinIsWaitedOn() async throws {
        let path = try DemoSimulator.locate()
        let stdin = try CloseOnExecPipe()
        let stdout = try CloseOnExecPipe()
        // The flag belongs to the open pipe, so the child's stdin is non-blocking too.
        #expect(fcntl(stdin.read, F_SETFL, fcntl(stdin.read, F_GETFL) | O_NONBLOCK) == 0)
        let child = try ChildProcess(path, arguments: ["--watch-stdin"], environment: [], stdin: .descriptor(stdin.read),
                                     stdout: .descriptor(stdout.write), stderr: .discard)
        defer { child.signal(SIGKILL) }
        close(stdin.read)
        close(stdout.write)
        let (chunks, feed) = AsyncStream.makeStream(of: [UInt8].self)
        let drain = PipeDrain(stdout.read) { feed.yield($0) }
        let line = try await withTimeout(seconds: 60 * timeoutScale) { () -> String in
            var bytes: [UInt8] = []
            for await chunk in chunks {
                bytes += chunk
                if bytes.last == UInt8(ascii: "\n") { break }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        _ = drain
        let api = try #require(URL(string: try SimulatorAnnouncement(line: line.trimmingCharacters(in: .newlines)).api)?.port, "\(line)")
        // Had an empty non-blocking read been its end, it would have stopped on announcing.
        let log = try await RawHTTP.get(port: api, "/_log", headers: [("Host", "127.0.0.1")])
        #expect(log.status == 200)
        #expect(child.exitStatus == nil)
        close(stdin.write)
        #expect(await child.exit(within: 60 * timeoutScale) == 0)
    }

    @Test("it is looked for beside this program, then in ../libexec/imagecached/, and a miss names both")
    func locating() throws {
        #expect(DemoSimulator.candidates(executable: "/opt/ic/bin/imagecache")
                == ["/opt/ic/bin/imagecache-simulator", "/opt/ic/libexec/imagecached/imagecache-simulator"])
        let folder = "/tmp/icli-sim-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder + "/libexec/imagecached", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let candidates = DemoSimulator.candidates(executable: folder + "/bin/imagecache")
        let failure = try #require(throws: DemoFailure.self) { try DemoSimulator.locate(candidates: candidates) }
        #expect(failure.description.contains("\(folder)/bin/imagecache-simulator or \(folder)/libexec/imagecached/imagecache-simulator"),
                "\(failure)")
        let installed = folder + "/libexec/imagecached/imagecache-simulator"
        #expect(FileManager.default.createFile(atPath: installed, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755]))
        #expect(try DemoSimulator.locate(candidates: candidates) == installed)
    }

    @Test("a program that ends before announcing, or announces something else, fails the start")
    func badStarts() async throws {
        let early = try await #require(throws: DaemonProcess.Failure.self) {
            _ = try await DemoSimulator.start(executable: "/bin/false", timeout: 600)
        }
        #expect(early.description.contains("false exited with status 1 before announcing"), "\(early)")
        let garbled = try await #require(throws: DemoFailure.self) {
            _ = try await DemoSimulator.start(executable: "/bin/echo", timeout: 60 * timeoutScale)
        }
        #expect(garbled.description.contains("announced \"--watch-stdin\", not {api, images, log}"), "\(garbled)")
    }
}
