import Foundation
import ImageCacheGallery
import Testing
import TestSupport

/// The page's own files over real HTTP: each script and stylesheet the page names is served
/// under the token with its type, and nothing runs inline (the Content-Security-Policy allows
/// only the page's own files, so an inline script or a name the server does not know would
/// leave the gallery without its screens).
@Suite("gallery assets", .timeLimit(.minutes(3)))
struct GalleryAssetTests {
    @Test func everyFileThePageNamesIsServedWithItsType() async throws {
        try await GalleryBridgeTests.withGallery { server in
            let host = GalleryBridgeTests.host(server)
            let page = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, "/\(server.token.text)/", headers: [host]) }
            #expect(page.status == 200)
            let scripts = Self.attribute("src", of: "script", in: page.text)
            let styles = Self.attribute("href", of: "link", in: page.text)
            // The collection screens are files of their own: the tag filter, the tile's menu, the metadata panel, Save.
            for name in ["collection.js", "menu.js", "metadata.js", "downloads.js", "app.js"] {
                #expect(scripts.contains(name), "the page does not load \(name)")
            }
            #expect(scripts.last == "app.js", "app.js, which starts the page, must load last: \(scripts)")
            #expect(Set(scripts).count == scripts.count, "a script is loaded twice: \(scripts)")
            #expect(!page.text.contains("<script>"), "an inline script, which the policy refuses")
            for (name, type) in scripts.map({ ($0, "text/javascript") }) + styles.map({ ($0, "text/css") }) {
                let asset = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, "/\(server.token.text)/\(name)", headers: [host]) }
                #expect(asset.status == 200, "\(name): HTTP \(asset.status)")
                #expect(asset.headers["content-type"]?.hasPrefix(type) == true, "\(name): \(asset.headers["content-type"] ?? "no type")")
                #expect(asset.body.count > 100, "\(name) is nearly empty")
            }
            let unknown = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, "/\(server.token.text)/nothing.js", headers: [host]) }
            #expect(unknown.status == 404)
        }
    }

    /// The values of `name="…"` in every `<tag …>` of `html`, in order.
    static func attribute(_ name: String, of tag: String, in html: String) -> [String] {
        var values: [String] = []
        var rest = html[...]
        while let open = rest.range(of: "<\(tag) ") {
            guard let close = rest[open.upperBound...].firstIndex(of: ">") else { break }
            let element = rest[open.upperBound..<close]
            if let start = element.range(of: "\(name)=\""), let end = element[start.upperBound...].firstIndex(of: "\"") {
                values.append(String(element[start.upperBound..<end]))
            }
            rest = rest[close...]
        }
        return values
    }
}
