import DaemonChild
import Foundation
import ProviderSimulator
import TestSupport
import ImageCacheProtocol
import Testing
@testable import ImageCacheCLI
@testable import imagecache_simulator

@Suite("Demo frame", .timeLimit(.minutes(1)))
struct DemoTests {
    @Test func configPointsProvidersAtTheSimulatorAndKeepsEverythingInTheWorkspace() {
        let paths = DemoConfig.Paths(workspace: "/tmp/imagecache-demo-abc")
        let text = DemoConfig.text(paths: paths, simulatorURL: "http://127.0.0.1:4242")
        #expect(text.contains("socket = \"/tmp/imagecache-demo-abc/imagecached.sock\""))
        #expect(text.contains("cache_dir = \"/tmp/imagecache-demo-abc/cache\""))
        #expect(text.contains("allow_http = true"))
        #expect(text.contains("allowed_hosts = 127.0.0.1"))
        #expect(text.contains("api_url = \"http://127.0.0.1:4242/unsplash\""))
        #expect(text.contains("api_url = \"http://127.0.0.1:4242/flickr/services/rest\""))
        #expect(text.contains("api_url = \"http://127.0.0.1:4242/pixabay/api\""))
        #expect(text.contains("download_dir = \"/tmp/imagecache-demo-abc/downloads\""))
    }

    @Test func theDaemonIsFoundNextToTheCLIThroughSymlinks() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("icli-\(UUID().uuidString.prefix(8))")
        let bin = dir.appendingPathComponent("bin")
        let links = dir.appendingPathComponent("links")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: links, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["imagecache", "imagecached"] {
            #expect(FileManager.default.createFile(atPath: bin.appendingPathComponent(name).path, contents: Data(),
                                                   attributes: [.posixPermissions: 0o755]))
        }
        try FileManager.default.createSymbolicLink(atPath: links.appendingPathComponent("imagecache").path,
                                                   withDestinationPath: bin.appendingPathComponent("imagecache").path)
        let viaLink = DaemonProcess.locate(argument0: links.appendingPathComponent("imagecache").path, environment: [:])
        #expect(viaLink.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
                == bin.appendingPathComponent("imagecached").resolvingSymlinksInPath().path)
        let viaPath = DaemonProcess.locate(argument0: "imagecache", environment: ["PATH": "/nonexistent:\(links.path)"])
        #expect(viaPath != nil)
        #expect(DaemonProcess.locate(argument0: "imagecache", environment: ["PATH": "/nonexistent"]) == nil)
    }

    @Test func methodNotFoundSkipsAStepWithAReason() async {
        let outcome = await DemoStep.classify { throw RPCError(.methodNotFound, "unknown method 'layout'") }
        guard case .skipped(let reason) = outcome else { Issue.record("got \(outcome)"); return }
        #expect(reason.contains("not in this build"))
    }

    @Test func anyOtherErrorFailsTheStep() async {
        let outcome = await DemoStep.classify { throw RPCError(.upstreamError, "HTTP 404") }
        guard case .failed(let message) = outcome else { Issue.record("got \(outcome)"); return }
        #expect(message.contains("HTTP 404"))
    }

    @Test func aMissingEarlierResultSkipsWithTheReason() async {
        let state = DemoState()
        let outcome = await DemoStep.classify { _ = try await state.requirePhotos(); return "" }
        guard case .skipped(let reason) = outcome else { Issue.record("got \(outcome)"); return }
        #expect(reason.contains("search step"))
    }

    @Test func aStepThatReturnsPasses() async {
        #expect(await DemoStep.classify { "ok" } == .passed("ok"))
    }

    @Test func theJSONReportNamesEachStepsOutcome() throws {
        let report = DemoReport(steps: [DemoReport.Step(title: "a", outcome: .passed("ok")),
                                        DemoReport.Step(title: "b", outcome: .skipped("not in this build")),
                                        DemoReport.Step(title: "c", outcome: .failed("boom"))], daemonStoppedCleanly: true)
        let text = try JSONOutput.text(report)
        let decoded = try JSONDecoder().decode(DemoReport.self, from: Data(text.utf8))
        #expect(decoded.steps.map(\.outcome) == ["passed", "skipped", "failed"])
        #expect(decoded.steps[1].detail == "not in this build")
    }

    @Test func theStoryHasEveryStepOfTheIssue() {
        let titles = DemoScript.steps.map(\.title).joined(separator: "\n")
        for word in ["hello", "pagination", "layout", "SVG", "recycled", "cache", "download", "stats"] {
            #expect(titles.contains(word), "\(word)")
        }
    }
}

@Suite("Demo image host and slot watch", .timeLimit(.minutes(1)))
struct DemoImageHostTests {
    let body = Array(0..<100).map { UInt8($0) }
    var response: SimulatedResponse { SimulatedResponse(status: 200, headers: [("ETag", "\"v1\"")], body: body) }

    func request(_ headers: [(String, String)]) -> SimulatedRequest {
        SimulatedRequest(method: "GET", uri: "/img/10x10/1.jpg", headers: headers, body: [])
    }

    @Test func aRangeIsAnsweredWithThatPart() {
        let (status, headers, part) = DemoImageServer.ranged(response, request: request([("Range", "bytes=10-19")]))
        #expect(status == 206 && part == Array(body[10...19]))
        #expect(headers.contains { $0 == ("Content-Range", "bytes 10-19/100") })
        let (_, _, tail) = DemoImageServer.ranged(response, request: request([("Range", "bytes=90-"), ("If-Range", "\"v1\"")]))
        #expect(tail == Array(body[90...]))
    }

    @Test func aRangePastTheEndIs416AndAStaleIfRangeGetsTheWholeBody() {
        #expect(DemoImageServer.ranged(response, request: request([("Range", "bytes=100-")])).0 == 416)
        let (status, _, whole) = DemoImageServer.ranged(response, request: request([("Range", "bytes=10-"), ("If-Range", "\"v0\"")]))
        #expect(status == 200 && whole == body)
        #expect(DemoImageServer.ranged(response, request: request([])).2 == body)
    }

    @Test func thumbnailsArePacedSlowerThanFullSizeBodies() {
        #expect(DemoImageServer.pieceSize(bodyBytes: 40_000) < DemoImageServer.pieceSize(bodyBytes: 3_000_000))
    }

    @Test func aSlotCountsAsLoadingOnlyOnceBytesFlow() async throws {
        let watch = SlotWatch()
        await watch.mark(3, received: 0, total: 100)
        #expect(await !watch.isLoading(3))
        let waiter = Task { await watch.waitUntilLoading(3) }
        await watch.mark(3, received: 40, total: 100)
        #expect(await watch.isLoading(3))
        try await withTimeout(seconds: 20) { await waiter.value }
        #expect(await watch.sizes(of: [3]) == (received: 40, total: 100))
    }
}

@Suite("Demo slot bars", .timeLimit(.minutes(1)))
struct DemoSlotBarsTests {
    private static let pipe = Terminal(isTTY: false, width: 80)

    @Test("a slot ended before its first progress was drawn: the late progress draws the bar already ended")
    func endedBeforeDrawn() async {
        let bars = SlotBars(terminal: Self.pipe)
        #expect(await bars.end(slot: 7, outcome: "recycled") == "")
        #expect(await bars.end(slot: 7, outcome: "cancelled") == "") // the first outcome stays
        let drawn = await bars.progress(slot: 7, photo: "p7", received: 10, total: 60)
        let last = drawn.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("slot 7 p7: recycled 16%"), "\(drawn)")
        #expect(await bars.progress(slot: 7, photo: "p7", received: 30, total: 60) == "")
        #expect(await bars.endAll("cancelled") == "")
    }

    @Test("a drawn bar ends once, with the first outcome; endAll ends only the open ones")
    func endsOnce() async {
        let bars = SlotBars(terminal: Self.pipe)
        _ = await bars.progress(slot: 1, photo: "a", received: 0, total: 100)
        _ = await bars.progress(slot: 2, photo: "b", received: 0, total: 100)
        #expect(await bars.end(slot: 1, outcome: "recycled").hasPrefix("slot 1 a: recycled 0%"))
        #expect(await bars.end(slot: 1, outcome: "done") == "")
        let rest = await bars.endAll("cancelled")
        #expect(rest.hasPrefix("slot 2 b: cancelled 0%") && !rest.contains("slot 1"), "\(rest)")
    }
}
