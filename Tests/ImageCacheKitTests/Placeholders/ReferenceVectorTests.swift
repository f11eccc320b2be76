import Foundation
@testable import ImageCacheProtocol
import Testing
import TestSupport

/// BlurHash against the reference implementation's published vectors (Tests/Fixtures/blurhash,
/// NOTES.md): the decoder reads each hash as the format defines it and paints what its terms
/// say, and the encoder writes the reference's terms back character for character.
@Suite("BlurHash: the reference implementation's published vectors", .timeLimit(.minutes(2)))
struct ReferenceVectorTests {
    struct Vector {
        var picture: String
        var x: Int
        var y: Int
        var hash: String
    }

    /// Rows of the reference's `Hashes.csv` format: `"picture",x,y,"hash"`.
    static func vectors(_ text: String) -> [Vector] {
        text.split(separator: "\n").map { line in
            let fields = line.split(separator: ",", maxSplits: 3).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            return Vector(picture: fields[0], x: Int(fields[1])!, y: Int(fields[2])!, hash: fields[3])
        }
    }

    static func rowsAndColumns() throws -> [Vector] { vectors(try BlurHashFixtures.text("reference-rows-and-columns.csv")) }

    /// Every published row: this folder's and the shared corpus's.
    static func all() throws -> [Vector] {
        try rowsAndColumns() + vectors(String(decoding: try Corpus.bytes("blurhash/reference-hashes.csv"), as: UTF8.self))
    }

    @Test("the README's hash: 4×3 components, average #979695, painted within range")
    func readmeHash() throws {
        let hash = try BlurHashFixtures.text("readme-hash.txt").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(hash == "LEHV6nWB2yk8pyo0adR*.7kCMdnj")
        let parsed = try BlurHash.parse(hash)
        #expect(parsed.xComponents == 4 && parsed.yComponents == 3)
        #expect(parsed.averageHex == "#979695")
        let pixels = try BlurHash.decode(hash, width: 32, height: 32)
        #expect(pixels.count == 32 * 32 * 3)
        // Written back from its own terms, it is the same text.
        #expect(BlurHash.encode(factors: parsed.components, xComponents: 4, yComponents: 3) == hash)
    }

    @Test("every published hash parses with its component counts; each picture has one average in every row")
    func parseAndAverage() throws {
        let vectors = try Self.all()
        #expect(vectors.count == 120)
        var averages: [String: Int] = [:]
        for vector in vectors {
            let parsed = try BlurHash.parse(vector.hash)
            #expect(parsed.xComponents == vector.x && parsed.yComponents == vector.y, "\(vector.hash)")
            if let seen = averages[vector.picture] { #expect(seen == parsed.dc, "\(vector.picture) \(vector.x)×\(vector.y)") }
            averages[vector.picture] = parsed.dc
        }
        #expect(averages.count == 6)
    }

    @Test("decoding paints what the terms say: 1×1 a flat average, N×1 equal rows, 1×N equal columns")
    func decodeShapes() throws {
        for vector in try Self.rowsAndColumns() {
            let (width, height) = (24, 16)
            let pixels = try BlurHash.decode(vector.hash, width: width, height: height)
            let parsed = try BlurHash.parse(vector.hash)
            func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(pixels[((y * width + x) * 3)..<((y * width + x) * 3 + 3)]) }
            let average = [parsed.average.red, parsed.average.green, parsed.average.blue]
            for y in 0..<height {
                for x in 0..<width {
                    if vector.x == 1 && vector.y == 1 { #expect(pixel(x, y) == average, "\(vector.hash)") }
                    if vector.y == 1 { #expect(pixel(x, y) == pixel(x, 0), "\(vector.hash): rows differ") }
                    if vector.x == 1 { #expect(pixel(x, y) == pixel(0, y), "\(vector.hash): columns differ") }
                }
            }
            // A term of zero ("fQ": 9, 9, 9) adds nothing: pic4's odd columns, pic5's odd rows.
            if vector.x > 1 || vector.y > 1 {
                let zero = parsed.components.dropFirst().filter { $0 == SIMD3<Float>(0, 0, 0) }.count
                let written = stride(from: 6, to: vector.hash.utf8.count, by: 2).filter {
                    let start = vector.hash.index(vector.hash.startIndex, offsetBy: $0)
                    return vector.hash[start...].hasPrefix("fQ")
                }.count
                #expect(zero == written, "\(vector.hash)")
            }
        }
    }

    @Test("encoding the reference's own terms writes its hash back, character for character")
    func encodeFromTerms() throws {
        var exact = 0
        for vector in try Self.all() {
            let parsed = try BlurHash.parse(vector.hash)
            let again = BlurHash.encode(factors: parsed.components, xComponents: vector.x, yComponents: vector.y)
            // The maximum is re-derived from the terms: exact when a term reaches it (a digit of
            // 0 or 18), else it can only come out lower, and every term is then re-quantised.
            if Self.reachesMaximum(vector.hash, parsed) {
                #expect(again == vector.hash, "\(vector.picture) \(vector.x)×\(vector.y)")
                exact += 1
            } else {
                #expect(again.prefix(1) == vector.hash.prefix(1) && again.dropFirst(2).prefix(4) == vector.hash.dropFirst(2).prefix(4),
                        "size and average kept: \(again) vs \(vector.hash)")
                #expect(Self.maximumDigit(again) <= Self.maximumDigit(vector.hash))
            }
        }
        // 95 of the 120 reach their maximum (counted when this was written).
        #expect(exact >= 95, "only \(exact) hashes re-encoded exactly")
    }

    /// Whether some AC term of `hash` is at plus or minus its maximum in some channel (a
    /// digit quantised to 0 or 18); a hash without AC terms always is.
    static func reachesMaximum(_ hash: String, _ parsed: BlurHash.Parsed) -> Bool {
        guard parsed.components.count > 1 else { return true }
        let largest = parsed.components.dropFirst().reduce(Float(0)) { max($0, abs($1.x), abs($1.y), abs($1.z)) }
        let maximum = Float(maximumDigit(hash) + 1) / 166
        return abs(largest - maximum) <= maximum * 1e-5
    }

    static func maximumDigit(_ hash: String) -> Int {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")
        return alphabet.firstIndex(of: Array(hash)[1]) ?? 0
    }
}
