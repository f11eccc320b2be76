import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ImageCacheSupport
import Logging
import ProviderSimulator
import Testing
import TestSupport

/// A search answer that loses records or fields is served, with one log line saying what was
/// left out (docs/protocol.md, "Records that are not what they should be").
@Suite("Left-out records are logged once per answer", .timeLimit(.minutes(2)))
struct LeftOutLogTests {
    /// Keeps every event logged through it.
    final class Capture: LogHandler, Sendable {
        private let events = LockedState<[(Logger.Level, String, [String: String])]>([])
        var all: [(Logger.Level, String, [String: String])] { events.withLock { $0 } }
        var logLevel: Logger.Level {
            get { .trace }
            set {}
        }
        var metadata: Logger.Metadata {
            get { [:] }
            set {}
        }
        subscript(metadataKey _: String) -> Logger.Metadata.Value? {
            get { nil }
            set {}
        }
        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).mapValues { "\($0)" }
            events.withLock { $0.append((event.level, "\(event.message)", fields)) }
        }
    }

    @Test("a recorded Flickr page with a video and a record without an id: served, one notice naming both")
    func oneLine() async throws {
        var body = try #require(try JSONSerialization.jsonObject(
            with: Data(CorpusAPI.response("flickr/flickrie_photos_search_all_url_extras").body)) as? [String: Any])
        var photos = try #require(body["photos"] as? [String: Any])
        var items = try #require(photos["photo"] as? [[String: Any]])
        items[3]["id"] = NSNull()
        photos["photo"] = items
        body["photos"] = photos
        let bytes = [UInt8](try JSONSerialization.data(withJSONObject: body))
        let server = try await LoopbackHTTPServer { _ in SimulatedResponse(status: 200, body: bytes) }
        defer { Task { await server.shutdown() } }
        let capture = Capture()
        let client = ProviderClient(provider: FlickrProvider(settings: CorpusAPI.settings(.flickr, apiURL: server.baseURL)),
                                    fetcher: URLSessionFetcher(), logger: Logger(label: "test") { _ in capture })
        let page = try await withTimeout(seconds: 60) { try await client.search(SearchQuery(term: .query("x y z"), perPage: 100)) }
        #expect(page.photos.count == 96 && page.skipped == 2)
        let lines = capture.all
        #expect(lines.count == 1)
        #expect(lines.first?.0 == .notice)
        #expect(lines.first?.2["left_out"] == "2" && lines.first?.2["provider"] == "flickr")
        #expect(lines.first?.2["reasons"]?.contains("video") == true)
        #expect(lines.first?.2["reasons"]?.contains("'id'") == true)
    }
}
