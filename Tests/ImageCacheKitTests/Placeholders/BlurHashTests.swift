import Foundation
import ImageCacheProtocol
import Testing
import TestSupport

/// BlurHash, held to the reference implementation's published hashes
/// (corpus `blurhash/reference-hashes.csv`) and to Unsplash's own, and strict on outside text.
@Suite("BlurHash: the reference's hashes read alike, encode and decode agree, outside text is checked", .timeLimit(.minutes(1)))
struct BlurHashTests {
    struct Vector {
        var picture: String
        var x: Int
        var y: Int
        var hash: String
    }

    static func vectors() throws -> [Vector] {
        let text = String(decoding: try Corpus.bytes("blurhash/reference-hashes.csv"), as: UTF8.self)
        return text.split(separator: "\n").map { line in
            // A hash may hold commas: only the first three separate fields.
            let fields = line.split(separator: ",", maxSplits: 3).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            return Vector(picture: fields[0], x: Int(fields[1])!, y: Int(fields[2])!, hash: fields[3])
        }
    }

    @Test("every reference hash parses with the component counts it was made with, one average per picture")
    func referenceHashesParse() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count == 30)
        var averages: [String: Int] = [:]
        for vector in vectors {
            let parsed = try BlurHash.parse(vector.hash)
            #expect(parsed.xComponents == vector.x && parsed.yComponents == vector.y, "\(vector.hash)")
            #expect(parsed.components.count == vector.x * vector.y)
            // The DC term is the picture's average whatever the component count.
            if let seen = averages[vector.picture] { #expect(seen == parsed.dc, "\(vector.picture)") }
            averages[vector.picture] = parsed.dc
        }
        #expect(averages.count == 6)
    }

    @Test("a reference hash's components are the same cosine terms as its 8×8 hash's, within their quantisation")
    func componentsAgreeAcrossCounts() throws {
        let vectors = try Self.vectors()
        for vector in vectors where vector.x * vector.y > 1 && !(vector.x == 8 && vector.y == 8) {
            let full = try #require(vectors.first { $0.picture == vector.picture && $0.x == 8 && $0.y == 8 })
            let small = try BlurHash.parse(vector.hash)
            let large = try BlurHash.parse(full.hash)
            let maximum = Self.maximum(vector.hash), largeMaximum = Self.maximum(full.hash)
            for j in 0..<vector.y {
                for i in 0..<vector.x where i + j > 0 {
                    let a = small.components[j * vector.x + i], b = large.components[j * 8 + i]
                    // One quantisation step of each (1/9 in square-root space, near ±1 at most).
                    let tolerance = 2 * (maximum + largeMaximum) / 9
                    let difference = a - b
                    #expect(abs(difference.x) <= tolerance && abs(difference.y) <= tolerance && abs(difference.z) <= tolerance,
                            "\(vector.picture) \(vector.x)×\(vector.y) component (\(i), \(j)): \(a) vs \(b)")
                }
            }
        }
    }

    @Test("decoding a reference hash and encoding what it paints gives back its terms, within what painting clips")
    func roundTrip() throws {
        var worstDC = 0, worstAC: Float = 0
        for vector in try Self.vectors() {
            let pixels = try BlurHash.decode(vector.hash, width: 64, height: 48)
            #expect(pixels.count == 64 * 48 * 3)
            let again = try #require(pixels.withUnsafeBufferPointer {
                BlurHash.encode($0, width: 64, height: 48, xComponents: vector.x, yComponents: vector.y)
            })
            let original = try BlurHash.parse(vector.hash), decoded = try BlurHash.parse(again)
            #expect(decoded.xComponents == vector.x && decoded.yComponents == vector.y)
            let a = original.average, b = decoded.average
            worstDC = max(worstDC, abs(Int(a.red) - Int(b.red)), abs(Int(a.green) - Int(b.green)), abs(Int(a.blue) - Int(b.blue)))
            let step = (Self.maximum(vector.hash) + Self.maximum(again)) / 9
            for (x, y) in zip(original.components.dropFirst(), decoded.components.dropFirst()) {
                let d = x - y
                worstAC = max(worstAC, abs(d.x) / step, abs(d.y) / step, abs(d.z) / step)
            }
        }
        // Painting clips every pixel to 0…255 and the reference's cosines are not quite
        // orthogonal on a pixel grid, so the terms come back close, not exact.
        #expect(worstDC <= 6, "the average moved by \(worstDC) levels")
        #expect(worstAC <= 4, "a term moved by \(worstAC) quantisation steps")
    }

    @Test("an image of one colour: its average is the colour; with one component it paints that colour exactly")
    func flatImage() throws {
        let colour: [UInt8] = [200, 100, 50]
        var pixels: [UInt8] = []
        for _ in 0..<(16 * 9) { pixels += colour }
        let hash = try #require(pixels.withUnsafeBufferPointer { BlurHash.encode($0, width: 16, height: 9) })
        let parsed = try BlurHash.parse(hash)
        #expect(parsed.xComponents == 4 && parsed.yComponents == 3 && hash.utf8.count == 28)
        #expect(parsed.averageHex == "#c86432")
        // The reference's basis, cos(π·i·x/width), is not quite orthogonal to a constant: the
        // ACs of a flat image are small, not zero (the reference encoder gives the same).
        let dc = parsed.components[0]
        for component in parsed.components.dropFirst() {
            #expect(abs(component.x) <= dc.x / 4 && abs(component.y) <= dc.y / 4 && abs(component.z) <= dc.z / 4, "\(hash)")
        }
        let single = try #require(pixels.withUnsafeBufferPointer {
            BlurHash.encode($0, width: 16, height: 9, xComponents: 1, yComponents: 1)
        })
        #expect(single == "00" + String(hash.dropFirst(2).prefix(4)), "the DC alone, written the same")
        let painted = try BlurHash.decode(single, width: 4, height: 3)
        for start in stride(from: 0, to: painted.count, by: 3) { #expect(Array(painted[start..<(start + 3)]) == colour) }
    }

    @Test("a thumbnail's placeholder: 4×3 (3×4 when portrait) from a small copy, its average the image's")
    func thumbnail() throws {
        for (width, height, x, y) in [(300, 200, 4, 3), (100, 300, 3, 4), (1, 1, 4, 3), (31, 7, 4, 3)] {
            var pixels: [UInt8] = []
            for _ in 0..<(width * height) { pixels += [10, 120, 240, 255] }
            let hash = try #require(pixels.withUnsafeBufferPointer {
                BlurHash.encodeThumbnail($0, width: width, height: height, bytesPerPixel: 4)
            })
            let parsed = try BlurHash.parse(hash)
            #expect(parsed.xComponents == x && parsed.yComponents == y, "\(width)×\(height): \(hash)")
            #expect(parsed.averageHex == "#0a78f0", "\(width)×\(height): \(hash)")
        }
        let few = [UInt8](repeating: 0, count: 10)
        few.withUnsafeBufferPointer { buffer in
            #expect(BlurHash.encodeThumbnail(buffer, width: 2, height: 2) == nil)
            #expect(BlurHash.encodeThumbnail(buffer, width: 0, height: 1) == nil)
            #expect(BlurHash.encodeThumbnail(buffer, width: .max, height: 2) == nil)
        }
    }

    @Test("every blur_hash Unsplash sent in the corpus parses; its colour field is #rrggbb")
    func unsplashHashes() throws {
        var seen = 0
        for file in try Corpus.files(in: "api/unsplash", withExtension: "json") where !file.hasSuffix(".http.json") {
            let text = String(decoding: try Corpus.bytes(file), as: UTF8.self)
            for hash in Self.values(of: "blur_hash", in: text) {
                _ = try BlurHash.parse(hash)
                seen += 1
            }
            for color in Self.values(of: "color", in: text) { #expect(PlaceholderColor.normalised(color) == color.lowercased(), "\(color)") }
        }
        #expect(seen >= 20)
    }

    @Test("outside text is refused before anything is computed: length, alphabet, component count, ranges, sizes")
    func strict() {
        let good = "LEHV6nWB2yk8pyo0adR*.7kCMdnj"
        #expect((try? BlurHash.parse(good)) != nil)
        #expect(throws: BlurHash.Failure.length(5, expected: nil)) { try BlurHash.parse("LEHV6") }
        #expect(throws: BlurHash.Failure.length(27, expected: 28)) { try BlurHash.parse(String(good.dropLast())) }
        #expect(throws: BlurHash.Failure.length(29, expected: 28)) { try BlurHash.parse(good + "0") }
        #expect(throws: BlurHash.Failure.alphabet(position: 3)) { try BlurHash.parse("LEH\"6nWB2yk8pyo0adR*.7kCMdnj") }
        #expect(throws: BlurHash.Failure.alphabet(position: 2)) { try BlurHash.parse("00é0000") }
        // 81 and 82 name 10 rows of components.
        #expect(throws: BlurHash.Failure.componentCount) { try BlurHash.parse("~0000000") }
        // The average above 0xFFFFFF, an AC above 18,18,18.
        #expect(throws: BlurHash.Failure.valueRange(position: 2)) { try BlurHash.parse("00~~~~") }
        #expect(throws: BlurHash.Failure.valueRange(position: 6)) { try BlurHash.parse("900000~~") }
        for (width, height) in [(0, 4), (4, -1), (Int.max, 2), (257, 256), (1 << 40, 1 << 40)] {
            #expect(throws: BlurHash.Failure.size(width: width, height: height)) { try BlurHash.decode(good, width: width, height: height) }
        }
        for punch in [Float.nan, .infinity, -3] { #expect((try? BlurHash.decode(good, width: 2, height: 2, punch: punch)) != nil) }
        // Encoding refuses what does not fit its buffer or the format.
        let four = [UInt8](repeating: 9, count: 12)
        four.withUnsafeBufferPointer { buffer in
            #expect(BlurHash.encode(buffer, width: 2, height: 2) != nil)
            #expect(BlurHash.encode(buffer, width: 3, height: 2) == nil)
            #expect(BlurHash.encode(buffer, width: 2, height: 2, xComponents: 10) == nil)
            #expect(BlurHash.encode(buffer, width: 2, height: 2, yComponents: 0) == nil)
            #expect(BlurHash.encode(buffer, width: .max, height: .max) == nil)
        }
        #expect(PlaceholderColor.normalised("#A0b1C2") == "#a0b1c2")
        for bad in ["", "#", "a0b1c2", "#a0b1c", "#a0b1c2f", "#g0b1c2", "#a0b1c\u{0}"] { #expect(PlaceholderColor.normalised(bad) == nil, "\(bad)") }
    }

    /// The largest AC value a hash can hold (its second character).
    static func maximum(_ hash: String) -> Float {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")
        let character = Array(hash)[1]
        return Float(alphabet.firstIndex(of: character)! + 1) / 166
    }

    /// Every string value of `key` in a JSON text.
    static func values(of key: String, in text: String) -> [String] {
        var values: [String] = []
        var rest = text[...]
        while let range = rest.range(of: "\"\(key)\":") {
            rest = rest[range.upperBound...].drop { $0 == " " }
            guard rest.first == "\"" else { continue }
            rest = rest.dropFirst()
            guard let end = rest.firstIndex(of: "\"") else { break }
            values.append(String(rest[..<end]))
            rest = rest[end...]
        }
        return values
    }
}
