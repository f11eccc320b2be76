import Dispatch
@testable import ImageCacheKit
import Testing
import TestSupport

/// The transforms of recent embedded profiles, kept by the profile's bytes: built once and
/// shared (by pictures and by threads), "no transform" remembered too, bounded in count and
/// in what it keeps.
@Suite("Imaging: colour transforms kept across pictures", .timeLimit(.minutes(2)))
struct ColourTransformCacheTests {
    private func profile(of jpeg: [UInt8]) throws -> [UInt8] {
        try #require(jpeg.withUnsafeBytes { JPEGMetadata(ByteReader($0)).iccProfile })
    }

    @Test("a profile's transform is built once per layout and shared; 'sRGB already' is kept too; the oldest leaves first")
    func keptByBytes() throws {
        let cache = ColourTransformCache(capacity: 2)
        let p3 = try ColourFixtures.bytes("display-p3.icc")
        let first = try #require(cache.transform(profile: p3, layout: .rgb))
        #expect(cache.transform(profile: p3, layout: .rgb) === first)
        // The same bytes in another array are the same profile; another layout is another transform.
        #expect(cache.transform(profile: Array(p3[...]), layout: .rgb) === first)
        let rgba = try #require(cache.transform(profile: p3, layout: .rgba))
        #expect(rgba !== first && cache.count == 2)
        #expect(cache.transform(profile: p3, layout: .rgb) === first)  // now the most recent
        // An sRGB profile needs none, and that is kept (evicting P3 RGBA, the least recent).
        let sRGB = try profile(of: try Corpus.bytes("jpeg/jpeg-decoder/mozilla/jpg-srgb-icc.jpg"))
        #expect(cache.transform(profile: sRGB, layout: .rgb) == nil)
        #expect(cache.count == 2)
        #expect(cache.transform(profile: p3, layout: .rgb) === first)
        #expect(cache.transform(profile: p3, layout: .rgba) !== rgba)  // was evicted, built again
    }

    @Test("a print profile's CMYK table and a profile over 64 KiB are built each time, never kept")
    func boundedInWhatItKeeps() throws {
        let cache = ColourTransformCache(capacity: 4)
        let print = try profile(of: try Corpus.bytes("jpeg/jpeg-decoder/reftest/ycck.jpg"))
        #expect(print.count > ColourTransformCache.maxProfileBytes)
        let one = try #require(cache.transform(profile: print, layout: .cmyk(inverted: true)))
        #expect(cache.transform(profile: print, layout: .cmyk(inverted: true)) !== one)
        #expect(cache.count == 0)
        // A small profile that does not describe the pixels (P3 on CMYK) needs no transform: kept.
        let p3 = try ColourFixtures.bytes("display-p3.icc")
        #expect(cache.transform(profile: p3, layout: .cmyk(inverted: false)) == nil)
        #expect(cache.count == 1)
    }

    @Test("one shared transform applied by many threads at once gives each the same pixels")
    func sharedAcrossThreads() throws {
        let cache = ColourTransformCache(capacity: 1)
        let transform = try #require(cache.transform(profile: try ColourFixtures.bytes("display-p3.icc"), layout: .rgb))
        let source = (0..<(64 * 64 * 3)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        var expected = source
        transform.apply(&expected, pixelCount: 64 * 64)
        #expect(expected != source)
        let results = LockedState<[[UInt8]]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            var pixels = source
            for _ in 0..<20 { pixels = source; transform.apply(&pixels, pixelCount: 64 * 64) }
            results.withLock { $0.append(pixels) }
        }
        #expect(results.withLock { $0 }.allSatisfy { $0 == expected })
    }
}
