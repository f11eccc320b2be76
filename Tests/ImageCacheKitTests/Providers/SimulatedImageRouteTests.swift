import ImageCacheKit
import ProviderSimulator
import Testing

@Suite("The simulator's image URLs serve the sizes the API answers claim", .timeLimit(.minutes(1)))
struct SimulatedImageRouteTests {
    private func request(_ uri: String) -> SimulatedRequest {
        SimulatedRequest(method: "GET", uri: uri, headers: [], body: [])
    }

    @Test("/img/WxH/SEED.jpg is a JPEG of exactly W×H, the same bytes every time")
    func exactSize() throws {
        let response = try #require(SimulatedImageRoute.handle(request("/img/640x427/00000000000000ab.jpg")))
        #expect(response.status == 200)
        let header = try response.body.withUnsafeBytes { try ImageHeaderProbe.header(ofComplete: $0) }
        #expect(header.format == .jpeg)
        #expect(header.width == 640 && header.height == 427)
        #expect(SimulatedImageRoute.handle(request("/img/640x427/00000000000000ab.jpg"))?.body == response.body)
    }

    @Test("?w=N scales the width to N and the height with it")
    func resized() throws {
        let response = try #require(SimulatedImageRoute.handle(request("/img/640x427/00000000000000ab.jpg?w=320&fm=jpg")))
        let header = try response.body.withUnsafeBytes { try ImageHeaderProbe.header(ofComplete: $0) }
        #expect(header.width == 320 && header.height == 214)
    }

    @Test("malformed and oversized image paths are 404, other paths are not this route's")
    func refusals() {
        #expect(SimulatedImageRoute.handle(request("/img/axb/00ab.jpg"))?.status == 404)
        #expect(SimulatedImageRoute.handle(request("/img/640x427/not-hex.jpg"))?.status == 404)
        #expect(SimulatedImageRoute.handle(request("/img/90000x90000/00ab.jpg"))?.status == 404)
        #expect(SimulatedImageRoute.handle(request("/unsplash/photos")) == nil)
    }
}
