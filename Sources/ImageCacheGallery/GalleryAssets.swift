/// The page the gallery serves: plain HTML, CSS and JavaScript written as files in `Assets/`,
/// so that editors, linters and `node --check` read them as what they are. SwiftPM embeds
/// them into this module at build time (`.embedInCode` in Package.swift, read here through
/// the generated `PackageResources`), so the installed `imagecache` is one file that needs no
/// resource folder beside it, there is no build step of its own, and nothing comes from a
/// CDN. Each file is served byte for byte as written: nothing is substituted into it.
public enum GalleryAssets {
    /// One file of the page.
    public struct Asset: Sendable {
        /// Its `Content-Type`.
        public let contentType: String
        /// Its bytes.
        public let bytes: [UInt8]
    }

    /// `index.html`.
    public static let page = Asset(contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html)

    /// The other files, by the name the page refers to them with: the only names served
    /// besides the page. The script is several files, one concern each, in the order the
    /// page loads them (which `index.html` alone decides).
    static let files: [String: Asset] = [
        "app.css": style(PackageResources.app_css),
        "rpc.js": script(PackageResources.rpc_js),
        "masonry.js": script(PackageResources.masonry_js),
        "tiles.js": script(PackageResources.tiles_js),
        "downloads.js": script(PackageResources.downloads_js),
        "detail.js": script(PackageResources.detail_js),
        "metadata.js": script(PackageResources.metadata_js),
        "menu.js": script(PackageResources.menu_js),
        "collection.js": script(PackageResources.collection_js),
        "app.js": script(PackageResources.app_js),
    ]

    /// An asset by name, nil when there is none.
    public static func named(_ name: String) -> Asset? { files[name] }

    private static func script(_ bytes: [UInt8]) -> Asset { Asset(contentType: "text/javascript; charset=utf-8", bytes: bytes) }
    private static func style(_ bytes: [UInt8]) -> Asset { Asset(contentType: "text/css; charset=utf-8", bytes: bytes) }
}
