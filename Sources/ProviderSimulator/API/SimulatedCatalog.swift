/// The simulator's deterministic world: the same query always yields the same total, the same
/// photos in the same order, with the same sizes, so tests can state expectations exactly and
/// a benchmark run is reproducible.
///
/// Everything derives from FNV-1a hashes of the query and of the photo id; a photo's
/// attributes come from its id alone, so `/photos/:id`, `getInfo` and `id=` describe the same
/// photo a search listed.
///
/// Image URLs follow one scheme, served (now or by the simulator's image half) from
/// `imageBaseURL`: `<imageBaseURL>/img/<w>x<h>/<seed>.jpg` is a JPEG of exactly w×h pixels;
/// with `?w=N` (Unsplash's `raw` + `w`) it is N pixels wide, height scaled to keep the aspect
/// ratio. `<seed>` is 16 hex digits that decide the picture's content.
public enum SimulatedCatalog {
    /// 64-bit FNV-1a: stable across runs and platforms (Swift's `Hasher` is seeded per process).
    public static func hash(_ text: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01b3
        }
        return h
    }

    /// SplitMix64 step: spreads a seed into well-mixed bits.
    public static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// The number of results the provider reports for a query (Pixabay: `total`, before its
    /// 500 cap; Flickr often over its 4 000 cap, so the cap is exercised).
    public static func defaultTotal(provider: String, query: String) -> Int {
        let h = mix(hash(provider + "|" + query))
        switch provider {
        case "flickr": return 1_000 + Int(h % 9_000)
        case "pixabay": return 100 + Int(h % 20_000)
        default: return 50 + Int(h % 1_950)
        }
    }

    /// What a photo is, derived from its id.
    public struct PhotoAttributes: Sendable, Hashable {
        public var seed: UInt64
        public var width: Int
        public var height: Int
        public var likes: Int
        public var views: Int
        public var downloads: Int
        public var author: String
        public var authorID: String
        public var title: String
        public var tags: [String]
        public var createdAtUnix: Int

        /// The hex seed used in image URLs.
        public var seedHex: String {
            let hex = String(seed, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }
    }

    /// The sponsor the simulated Unsplash names on the first result of every search.
    public static let unsplashSponsor = "Simulated Sponsor"
    /// The one Flickr id the simulator answers as a video (`getInfo` `media: "video"`); no
    /// photo search returns it, as on Flickr with `media=photos`.
    public static let flickrVideoID = "24379963431"

    /// When the camera took the photo (seconds since 1970, UTC): some time before it was posted.
    public static func takenUnix(_ a: PhotoAttributes) -> Int {
        a.createdAtUnix - 3_600 - Int(a.seed % 40_000_000)
    }

    static let names = ["Ada Lovelace", "Ansel Adams", "Dorothea Lange", "Henri Cartier", "Vivian Maier",
                        "Imogen Cunningham", "Robert Capa", "Berenice Abbott"]
    static let words = ["river", "mountain", "city", "street", "forest", "beach", "night", "portrait", "market", "bridge"]

    /// The attributes of the photo with this id (any id; the same id always gives the same).
    public static func attributes(id: String) -> PhotoAttributes {
        let s = mix(hash("photo|" + id))
        let r1 = mix(s), r2 = mix(r1), r3 = mix(r2)
        // Landscape and portrait both occur; sizes even, between 1200 and 6000.
        let width = 1200 + Int(r1 % 2400) * 2
        let height = 800 + Int(r2 % 2000) * 2
        let author = names[Int(r3 % UInt64(names.count))]
        let tags = (0..<3).map { words[Int((mix(r3 &+ UInt64($0))) % UInt64(words.count))] }
        return PhotoAttributes(
            seed: s, width: width, height: height, likes: Int(r1 % 5000), views: Int(r2 % 900_000),
            downloads: Int(r3 % 90_000), author: author,
            authorID: author.lowercased().replacingOccurrences(of: " ", with: "_"),
            title: "\(tags[0]) \(tags[1])", tags: tags, createdAtUnix: 1_500_000_000 + Int(r1 % 200_000_000))
    }

    /// The provider id of the `index`-th result of a query (0-based).
    public static func photoID(provider: String, query: String, index: Int) -> String {
        let s = mix(hash(provider + "|" + query) &+ UInt64(index))
        switch provider {
        case "flickr": return String(10_000_000_000 + s % 89_999_999_999)
        case "pixabay": return String(1_000_000 + s % 8_999_999)
        default:
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
            var v = s
            var chars: [Character] = []
            for _ in 0..<11 {
                chars.append(alphabet[Int(v % 64)])
                v /= 64
            }
            return String(chars)
        }
    }

    /// Whether an id could have been issued by the simulated provider (others are "not found").
    public static func isValidID(_ id: String, provider: String) -> Bool {
        switch provider {
        case "flickr": return id.count == 11 && id.allSatisfy { $0.isASCII && $0.isNumber }
        case "pixabay": return id.count == 7 && id.allSatisfy { $0.isASCII && $0.isNumber }
        default:
            return id.count == 11 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        }
    }

    /// The image URL of a photo at a size.
    public static func imageURL(base: String, width: Int, height: Int, seedHex: String) -> String {
        "\(base)/img/\(width)x\(height)/\(seedHex).jpg"
    }

    /// The size of a rendition `edge` pixels on its longest side (never upscaled).
    public static func fit(_ width: Int, _ height: Int, longestEdge edge: Int) -> (Int, Int) {
        let scale = min(1, Double(edge) / Double(max(width, height)))
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    /// The size of a rendition `w` pixels wide (never upscaled).
    public static func fitWidth(_ width: Int, _ height: Int, _ w: Int) -> (Int, Int) {
        let target = min(w, width)
        return (target, max(1, Int((Double(height) * Double(target) / Double(width)).rounded())))
    }
}
