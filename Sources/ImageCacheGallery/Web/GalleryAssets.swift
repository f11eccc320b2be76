/// The page the gallery serves: plain HTML, CSS and JavaScript kept in this module as
/// strings (`GalleryPage`, `GalleryStyle`, `GalleryScript…`), so the installed `imagecache`
/// needs no resource folder, there is no build step, and nothing comes from a CDN.
public enum GalleryAssets {
    /// One file of the page.
    public struct Asset: Sendable {
        /// Its `Content-Type`.
        public let contentType: String
        /// Its bytes.
        public let bytes: [UInt8]
    }

    /// `index.html`.
    public static let page = Asset(contentType: "text/html; charset=utf-8", bytes: Array(GalleryPage.html.utf8))

    /// The other files, by the name the page refers to them with. The script is several
    /// files, one concern each, loaded in this order by the page.
    static let files: [String: Asset] = {
        var files = ["app.css": Asset(contentType: "text/css; charset=utf-8", bytes: Array(GalleryStyle.css.utf8))]
        for (name, text) in GalleryScripts.ordered {
            files[name] = Asset(contentType: "text/javascript; charset=utf-8", bytes: Array(text.utf8))
        }
        return files
    }()

    /// An asset by name, nil when there is none.
    public static func named(_ name: String) -> Asset? { files[name] }
}

/// The page's scripts in load order.
enum GalleryScripts {
    static let ordered: [(String, String)] = [
        ("rpc.js", GalleryScriptRPC.js),
        ("masonry.js", GalleryScriptMasonry.js),
        ("tiles.js", GalleryScriptTiles.js),
        ("downloads.js", GalleryScriptDownloads.js),
        ("detail.js", GalleryScriptDetail.js),
        ("metadata.js", GalleryScriptMetadata.js),
        ("menu.js", GalleryScriptMenu.js),
        ("collection.js", GalleryScriptCollection.js),
        ("app.js", GalleryScriptApp.js),
    ]
}
