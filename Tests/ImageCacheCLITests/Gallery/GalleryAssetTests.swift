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

    /// Every file of `Sources/ImageCacheGallery/Assets/` is served under its own name (`index.html`
    /// as the page itself), byte for byte as it is in the repository, with its type and no
    /// caching: the build embeds the files, nothing rewrites them on the way out, and a file
    /// added to the folder but not to the served names fails here instead of in a browser.
    @Test func everyAssetFileIsServedByteForByte() async throws {
        let folder = InstallScriptTests.repository.appendingPathComponent("Sources/ImageCacheGallery/Assets")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names.contains("index.html") && names.contains("app.css") && names.contains("app.js"), "\(folder.path): \(names)")
        let types = ["html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8"]
        try await GalleryBridgeTests.withGallery { server in
            let host = GalleryBridgeTests.host(server)
            for name in names {
                let file = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name)))
                let path = "/\(server.token.text)/" + (name == "index.html" ? "" : name)
                let served = try await withTimeout(seconds: 20) { try await RawHTTP.get(port: server.port, path, headers: [host]) }
                #expect(served.status == 200, "\(name): HTTP \(served.status)")
                // Compared as one Bool, so that a failure names the first differing byte instead of printing both files.
                let same = served.body == file
                let differsAt = zip(served.body, file).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(served.body.count, file.count)
                #expect(same, "\(name): served \(served.body.count) bytes, the file has \(file.count); they differ from byte \(differsAt)")
                let type = types[String(name.split(separator: ".").last ?? "")]
                #expect(type != nil, "\(name): a kind of file the gallery does not serve")
                #expect(served.headers["content-type"] == type, "\(name): \(served.headers["content-type"] ?? "no type")")
                #expect(served.headers["cache-control"] == "no-store", "\(name): \(served.headers["cache-control"] ?? "no Cache-Control")")
            }
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
