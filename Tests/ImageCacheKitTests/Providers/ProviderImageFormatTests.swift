import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import ImageCacheConfig
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Unsplash image_format: fewer bytes from imgix", .timeLimit(.minutes(2)))
struct ProviderImageFormatTests {
    @Test("the variant URL asks for the exact width and the configured format", arguments: [
        (ProviderImageFormat.auto, "webp"), (.avif, "avif"), (.webp, "webp"), (.jpg, "jpg"),
    ])
    func variantURL(format: ProviderImageFormat, fm: String) throws {
        let unsplash = UnsplashProvider(settings: CorpusAPI.settings(.unsplash))
        let photo = try unsplash.decodePhoto(try CorpusAPI.response("unsplash/unsplash_client_photo_vUGBY_MnSsg"), id: "vUGBY_MnSsg")
        let query = queryItems(photo.variant(forWidth: 256, format: format).url)
        #expect(query["w"] == "256" && query["fm"] == fm && query["q"] == "80")
        #expect(query["dpr"] == nil)
        // Downloads keep asking for JPEG.
        #expect(queryItems(photo.variant(forWidth: 256).url)["fm"] == "jpg")
    }

    @Test("a raw URL's own fm and dpr are replaced, not repeated")
    func replacesParameters() throws {
        let url = try #require(ProviderPhoto.resized("https://images.unsplash.com/photo-1?ixid=abc&fm=png&dpr=2", width: 300, format: .webp))
        let components = try #require(URLComponents(string: url))
        #expect(components.queryItems?.filter { $0.name == "fm" }.map(\.value) == ["webp"])
        #expect(components.queryItems?.contains { $0.name == "dpr" } == false)
        #expect(queryItems(url)["ixid"] == "abc")
    }

    @Test("[providers.unsplash] image_format takes auto, webp, avif or jpg; auto by default")
    func configuration() throws {
        #expect(try parseConfig("").unsplash.imageFormat == .auto)
        for format in ProviderImageFormat.allCases {
            let configuration = try parseConfig("[providers.unsplash]\nimage_format = \(format.rawValue)\n")
            #expect(configuration.unsplash.imageFormat == format)
            #expect(ImagePipeline.Settings(configuration).unsplashFormat == format)
        }
        #expect(throws: (any Error).self) { _ = try parseConfig("[providers.unsplash]\nimage_format = heic\n") }
        #expect(throws: (any Error).self) { _ = try parseConfig("[providers.flickr]\nimage_format = webp\n") }
    }

    @Test("the simulator serves fm=webp and fm=avif over HTTP; the daemon decodes them; auto (WebP) fetches fewer bytes than jpg")
    func simulatorServesFormats() async throws {
        let h = try await SimulatorHarness.start()
        // The harness serves the APIs; the image host (imgix's role) is the simulator's image route.
        let images = try await LoopbackHTTPServer(handler: SimulatedImageRoute.handler)
        defer { Task { await h.shutdown(); await images.shutdown() } }
        let result = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: "harbour", provider: "unsplash", perPage: 3))
        }
        var bytes: [ProviderImageFormat: Int] = [:]
        for summary in result.photos {
            let photo = try #require(await h.coordinator.rememberedPhoto(id: summary.id))
            for format in ProviderImageFormat.allCases {
                let variant = photo.variant(forWidth: 256, format: format).url
                let url = try #require(URL(string: variant.replacingOccurrences(of: h.sim.baseURL, with: images.baseURL)))
                let (data, response) = try await withTimeout(seconds: 60) { try await URLSession.shared.data(from: url) }
                let http = try #require(response as? HTTPURLResponse)
                let body = [UInt8](data)
                let expected: ImageFormat = format == .avif ? .avif : (format == .jpg ? .jpeg : .webp)
                #expect(http.value(forHTTPHeaderField: "Content-Type") == expected.mimeType)
                #expect(ImageFormat.sniff(body) == expected)
                let thumbnail = try Thumbnailer.makeThumbnail(from: body, width: 128)
                #expect(thumbnail.width == 128 && thumbnail.format == .jpeg)
                bytes[format, default: 0] += body.count
            }
        }
        // auto is WebP: fewer bytes than JPEG at the same q, even on the simulator's noisy
        // pictures (AVIF is not asserted: at q=80 it is no smaller than JPEG on noise).
        #expect(bytes[.auto]! < bytes[.jpg]!, "\(bytes)")
        #expect(bytes[.auto] == bytes[.webp])
    }
}
