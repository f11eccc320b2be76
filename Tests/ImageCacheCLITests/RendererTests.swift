import Foundation
import ImageCacheProtocol
import Testing
@testable import ImageCacheCLI

@Suite("Stats, status, layout and error renderers", .timeLimit(.minutes(1)))
struct RendererTests {
    @Test("rates and durations from any figure: huge, negative, NaN and infinite ones render, never trap")
    func hostileFigures() {
        #expect(Units.rate(1536) == "1.5 KiB/s")
        #expect(Units.rate(1e300).hasSuffix(" TiB/s"))
        for bad in [-1.0, 0, .nan, .infinity, -.infinity] { #expect(Units.rate(bad) == "-- B/s") }
        #expect(Units.duration(75) == "1m15s")
        #expect(Units.duration(1e300).hasSuffix("h"))
        for bad in [-1.0, .nan, .infinity] { #expect(Units.duration(bad) == "--") }
    }

    @Test func statsSummaryShowsEveryFigure() {
        let text = StatsSummary.render(Fixtures.stats)
        for figure in ["1h02m", "3 sessions", "12 entries", "3.0 MiB", "128 MiB", "30 hits", "10 misses", "75.0%",
                       "40 entries", "20 MiB", "1.0 GiB", "8 hits", "2 misses", "80.0% of memory misses",
                       "40 requests: 75.0% from memory, 20.0% from disk, 5.0% from the network (cache hit rate 95.0%)",
                       "2 in flight", "5 queued", "77 requests", "8.6 MiB received", "439 KiB discarded",
                       "unsplash", "10 requests", "1 errors", "49 requests left", "pixabay", "not reported"] {
            #expect(text.contains(figure), "missing \(figure) in\n\(text)")
        }
    }

    @Test func theSharedTierIsShownWithItsNodesAndTheRequestsItAnswered() throws {
        var stats = Fixtures.stats
        stats.shared = .init(nodes: [.init(server: "10.0.0.11:11211", state: "up", hits: 7, misses: 3, errors: 0, ejections: 0,
                                           bytesSent: 2048, bytesReceived: 40960),
                                     .init(server: "10.0.0.12:11211", state: "ejected", hits: 0, misses: 0, errors: 4, ejections: 1,
                                           bytesSent: 0, bytesReceived: 0)],
                             thumbnailHits: 1, rejected: 2, waits: 5, waitsExpired: 1, writes: 6, writesFailed: 1)
        let text = StatsSummary.render(stats)
        for figure in ["20.0% from disk, 2.5% from the shared tier, 2.5% from the network",
                       "1 thumbnail from the tier, 6 written (1 not), 5 waited for another host (1 in vain), 2 refused by verification",
                       "10.0.0.11:11211 up: 7 hits, 3 misses, 0 errors, 0 ejections, 2.0 KiB sent, 40 KiB received",
                       "10.0.0.12:11211 ejected: 0 hits, 0 misses, 4 errors, 1 ejection"] {
            #expect(text.contains(figure), "missing \(figure) in\n\(text)")
        }
        #expect(StatsSummary.render(try JSONValue(encoding: stats)) == text)
    }

    @Test func aFullStatsAnswerOnTheWireRendersTheFullSummary() throws {
        let wire = try JSONValue(encoding: Fixtures.stats)
        #expect(StatsSummary.render(wire) == StatsSummary.render(Fixtures.stats))
    }

    @Test func aPartialStatsAnswerListsWhatWasSentAndNamesWhatIsMissing() {
        let wire = JSONValue.object(["sessions": .int(2), "uptimeSeconds": .double(75), "network": .object(["requests": .int(4)])])
        let text = StatsSummary.render(wire)
        #expect(text.contains("uptime     1m15s"))
        #expect(text.contains("sessions   2 connected"))
        #expect(text.contains("network.requests = 4"))
        #expect(text.contains("no memory, disk, providers sections"))
    }

    @Test func statusNamesProvidersWithoutKeys() {
        let hello = HelloResult(version: "0.1.0", providers: [.init(name: "unsplash", configured: true), .init(name: "flickr", configured: false)])
        let text = StatusSummary.render(hello, socketPath: "/run/x.sock")
        #expect(text.contains("imagecached 0.1.0 at /run/x.sock, protocol 1"))
        #expect(text.contains("unsplash  configured"))
        #expect(text.contains("flickr    no API key"))
    }

    @Test func layoutTableHasARowPerFrameAndTheColumnHeights() {
        let result = LayoutResult(frames: [
            LayoutFrame(photo: "unsplash:a", column: 0, x: 0, y: 0, width: 296, height: 197.3, dims: .decoded),
            LayoutFrame(photo: "pixabay:1", column: 1, x: 304, y: 0, width: 296, height: 296, dims: .unknown),
        ], columnHeights: [197.3, 296])
        let text = LayoutTable.render(result, width: 100)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 5)
        #expect(lines[1].contains("unsplash:a") && lines[1].contains("197.3") && lines[1].contains("decoded"))
        #expect(lines[2].contains("304") && lines[2].contains("unknown"))
        #expect(text.contains("column heights: 197.3, 296"))
        #expect(text.contains("1 photo has unknown dimensions"))
    }

    @Test func showSummaryGivesPathDimensionsAndSource() {
        let r = ThumbnailShowResult(slot: 0, photo: "unsplash:a", path: "/c/ab/cd.jpg", width: 256, height: 171, bytes: 20480,
                                    mime: "image/jpeg", source: .disk)
        let text = ShowSummary.render(r)
        #expect(text.contains("/c/ab/cd.jpg") && text.contains("256×171") && text.contains("20 KiB") && text.contains("disk"))
    }

    @Test(arguments: ErrorKind.allCases)
    func everyErrorKindRendersTheDaemonsMessageAndKind(kind: ErrorKind) {
        let text = ErrorMessage.render(RPCError(kind, "something about \(kind.rawValue)"))
        #expect(text.hasPrefix("imagecache: something about \(kind.rawValue)"))
        #expect(text.contains("[\(kind.rawValue), \(kind.code)]"))
    }

    @Test func rateLimitedSaysWhenToRetry() {
        #expect(ErrorMessage.render(RPCError(.rateLimited, "quota", retryAfter: 90)).contains("Retry in 1m30s"))
    }

    @Test func methodNotFoundSaysTheDaemonIsOlder() {
        #expect(ErrorMessage.render(RPCError(.methodNotFound, "unknown method 'layout'")).contains("older than this imagecache"))
    }

    @Test func jsonErrorKeepsTheDaemonsErrorObject() throws {
        let text = JSONOutput.errorText(RPCError(.busy, "queue full"))
        let value = try JSONDecoder().decode([String: RPCError].self, from: Data(text.utf8))
        #expect(value["error"] == RPCError(.busy, "queue full"))
    }

    @Test func unitsAreBinaryAndReadable() {
        #expect(Units.bytes(512) == "512 B")
        #expect(Units.bytes(1536) == "1.5 KiB")
        #expect(Units.bytes(50 * 1024 * 1024) == "50 MiB")
        #expect(Units.duration(42) == "42s")
        #expect(Units.duration(75) == "1m15s")
        #expect(Units.percent(1, of: 0) == "—")
    }

    @Test func terminalWidthPrefersTheWindowThenColumnsThenAHundred() {
        #expect(Terminal.width(isTTY: true, windowColumns: 132, environment: ["COLUMNS": "80"]) == 132)
        #expect(Terminal.width(isTTY: false, windowColumns: 132, environment: ["COLUMNS": "80"]) == 80)
        #expect(Terminal.width(isTTY: false, windowColumns: nil, environment: [:]) == 100)
        #expect(Terminal.width(isTTY: false, windowColumns: nil, environment: ["COLUMNS": "junk"]) == 100)
    }
}
