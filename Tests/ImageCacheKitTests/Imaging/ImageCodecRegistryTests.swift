@testable import ImageCacheKit
import Testing

/// The registry is the one place that maps formats to codecs: each format's codec must read
/// that format, and the list sniffing walks must hold every codec once, in the cases' order.
@Suite("Imaging: the codec registry", .timeLimit(.minutes(1)))
struct ImageCodecRegistryTests {
    @Test("each format's codec reads that format, under a name and MIME type of its own")
    func codecsMatchTheirFormats() {
        for format in ImageFormat.allCases {
            #expect(format.codec.format == format, "\(format)")
            #expect(format.codec.mimeType == format.mimeType, "\(format)")
        }
        #expect(Set(ImageFormat.allCases.map { $0.codec.name }).count == ImageFormat.allCases.count)
        #expect(Set(ImageFormat.allCases.map { $0.codec.mimeType }).count == ImageFormat.allCases.count)
    }

    @Test("each format's extensions name it back, and no two formats share one")
    func extensionsNameTheirFormats() {
        for format in ImageFormat.allCases {
            for ext in format.codec.fileExtensions {
                #expect(ImageFormat.named(byExtension: ext.uppercased()) == format, "\(ext)")
            }
        }
        let all = ImageFormat.allCases.flatMap { $0.codec.fileExtensions }
        #expect(Set(all).count == all.count)
        #expect(ImageFormat.jpeg.fileExtension == "jpg")
        #expect(ImageFormat.named(byExtension: "txt") == nil)
    }

    @Test("sniffing walks every codec once, in the order of the formats")
    func sniffingOrder() {
        #expect(ImageFormat.codecs.map { $0.format } == ImageFormat.allCases)
    }

    @Test("the formats a library decodes only whole share one shape; JPEG and PNG stream")
    func wholeBodyFormats() {
        let whole = ImageFormat.allCases.filter { $0.codec is any WholeBodyCodec.Type }
        #expect(whole == [.gif, .webp, .avif])
    }
}
