import Foundation
@testable import ImageCacheServer
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// Provider keys never reach the daemon's log, at its most talkative level, whatever the
/// requests do: searches on every provider (Flickr and Pixabay carry the key in the query
/// string), thumbnails of their photos, and the failures that log a URL.
@Suite("Keys never reach the log", .timeLimit(.minutes(5)))
struct KeyRedactionLogTests {
    @Test("searches, thumbnails and failures on every provider log no key, at debug level")
    func noKeyInAnyLogLine() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            var id = 0
            func next() -> Int { id += 1; return id }

            for provider in ["unsplash", "flickr", "pixabay"] {
                let answer = try await client.ask(next(), "search", ["query": "mountain lake", "provider": provider, "perPage": 3])
                let photos = try #require(answer.resultObject?["photos"] as? [[String: Any]], "\(provider): \(answer)")
                for (slot, photo) in photos.prefix(2).enumerated() {
                    let photoID = try #require(photo["id"] as? String)
                    _ = try await client.ask(next(), "thumbnail.show", ["slot": slot, "photo": photoID, "view": provider])
                }
                // A provider failure is logged with its (redacted) request.
                f.sim.api.setFault(.status(500, body: "upstream broke"), for: provider)
                let failed = try await client.ask(next(), "search", ["query": "broken provider", "provider": provider])
                #expect(failed.errorCode != nil)
                f.sim.api.setFault(nil, for: provider)
            }
            // A failing image fetch is logged with its (redacted) URL, credentials included in it.
            let secretURL = f.images.url("/missing.jpg") + "?api_key=\(ProviderAPISimulator.defaultKeys["flickr"]!)&w=1"
            let missing = try await client.ask(next(), "thumbnail.show", ["slot": 9, "url": secretURL])
            #expect(missing.errorCode != nil)

            let events = f.logs.events("")
            // URLs that carried a key were logged (so this test can see a leak), with the key
            // replaced: Flickr's and Pixabay's searches, and the image URL.
            let logged = events.flatMap { [$0.message] + Array($0.metadata.values) }
            #expect(logged.contains { $0.contains("/flickr/") && $0.contains("api_key=REDACTED") })
            #expect(logged.contains { $0.contains("/pixabay/") && $0.contains("key=REDACTED") })
            #expect(logged.contains { $0.contains("/missing.jpg?api_key=REDACTED") })
            for (provider, key) in ProviderAPISimulator.defaultKeys {
                let leaks = events.filter { event in
                    event.message.contains(key) || event.metadata.values.contains { $0.contains(key) }
                }
                #expect(leaks.isEmpty, "\(provider)'s key in the log: \(leaks.prefix(3).map { "\($0.message) \($0.metadata)" })")
            }
            await client.close()
        }
    }
}
