import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import ImageCacheProtocol
import Testing
@testable import ImageCacheCLI

@Suite("Layout SVG", .timeLimit(.minutes(1)))
struct GridSVGTests {
    let layout = LayoutResult(frames: [
        LayoutFrame(photo: "unsplash:a<b>&\"c'", column: 0, x: 0, y: 0, width: 100, height: 150, dims: .decoded),
        LayoutFrame(photo: "flickr:123", column: 1, x: 108, y: 0, width: 100, height: 66.7, dims: .provider),
        LayoutFrame(photo: "pixabay:9", column: 1, x: 108, y: 74.7, width: 100, height: 100, dims: .unknown),
    ], columnHeights: [150, 174.7])

    /// Parses with Foundation's XML parser: a well-formedness check, not a string match.
    func parse(_ svg: String) -> (ok: Bool, texts: [String], images: Int, rects: Int) {
        final class Collector: NSObject, XMLParserDelegate {
            var texts: [String] = []
            var current: String?
            var images = 0
            var rects = 0
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
                if name == "text" { current = "" }
                if name == "image" { images += 1 }
                if name == "rect" { rects += 1 }
            }
            func parser(_ parser: XMLParser, foundCharacters string: String) { current? += string }
            func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
                if name == "text", let current { texts.append(current) }
                if name == "text" { current = nil }
            }
        }
        let parser = XMLParser(data: Data(svg.utf8))
        let collector = Collector()
        parser.delegate = collector
        let ok = parser.parse()
        return (ok, collector.texts, collector.images, collector.rects)
    }

    @Test func svgIsWellFormedAndNamesEveryPhoto() {
        let result = parse(GridSVG.render(layout, width: 208))
        #expect(result.ok)
        #expect(result.texts == layout.frames.map(\.photo))
        #expect(result.rects == 4)
    }

    @Test func knownThumbnailsAreEmbeddedAsDataURIs() {
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00])
        let svg = GridSVG.render(layout, width: 208, images: ["flickr:123": ("image/jpeg", jpeg)])
        #expect(parse(svg).images == 1)
        #expect(svg.contains("data:image/jpeg;base64,\(jpeg.base64EncodedString())"))
    }

    @Test("a frame not yet loaded is painted with the photo's placeholder colour; without one, its dims tint")
    func placeholderColourFill() {
        var frames = layout.frames
        frames[1].color = "#1a2b3c"
        // A colour that is not #rrggbb is outside input: never written into the SVG.
        frames[2].color = "red\" onload=\"x"
        let svg = GridSVG.render(LayoutResult(frames: frames, columnHeights: layout.columnHeights), width: 208)
        #expect(parse(svg).ok)
        let fills = svg.split(separator: "\n").filter { $0.hasPrefix("<rect x=\"1") || $0.hasPrefix("<rect x=\"0\" y=\"0\" width=\"100") }
        #expect(fills.count == 3)
        #expect(svg.contains("<rect x=\"108\" y=\"0\" width=\"100\" height=\"66.7\" fill=\"#1a2b3c\""))
        #expect(svg.contains("<rect x=\"108\" y=\"74.7\" width=\"100\" height=\"100\" fill=\"\(GridSVG.fill(.unknown))\""))
        #expect(svg.contains("<rect x=\"0\" y=\"0\" width=\"100\" height=\"150\" fill=\"\(GridSVG.fill(.decoded))\""))
        #expect(!svg.contains("onload"))
    }

    @Test func theCanvasCoversTheTallestColumn() {
        let svg = GridSVG.render(layout, width: 208)
        #expect(svg.contains("width=\"208\" height=\"174.7\""))
    }

    @Test func controlCharactersInIdsAreDropped() {
        #expect(GridSVG.escape("a\u{1}b&") == "ab&amp;")
    }
}
