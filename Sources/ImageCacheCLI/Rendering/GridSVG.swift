import Foundation
import ImageCacheProtocol
import ImageCacheSupport

/// An SVG picture of a masonry layout a person can open in a browser: one rectangle per
/// frame with its photo id, and the thumbnail itself drawn in it when its file is known. A
/// frame is filled with the photo's placeholder colour when the layout carries one (what a
/// grid paints before the thumbnail arrives), else with a neutral tint of its `dims`.
///
/// Ids come from providers and may hold `<`, `&` or quotes, so every text and attribute is
/// escaped; the output is well-formed XML whatever the ids are.
public enum GridSVG {
    /// The picture. `images` maps photo ids to the thumbnail's bytes and MIME type; those
    /// are embedded as `data:` URIs so the file stands alone.
    public static func render(_ result: LayoutResult, width: Double,
                              images: [String: (mime: String, bytes: Data)] = [:]) -> String {
        let height = max(1, result.columnHeights.max() ?? 0, result.frames.map { $0.y + $0.height }.max() ?? 0)
        var svg = """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" font-family="sans-serif" font-size="12">
        <rect x="0" y="0" width="\(n(width))" height="\(n(height))" fill="#f4f4f4"/>

        """
        for frame in result.frames {
            let id = escape(frame.photo)
            svg += "<g>\n<title>\(id) (\(escape(frame.dims.rawValue)) dimensions)</title>\n"
            svg += "<rect x=\"\(n(frame.x))\" y=\"\(n(frame.y))\" width=\"\(n(frame.width))\" height=\"\(n(frame.height))\" "
                + "fill=\"\(fill(frame))\" stroke=\"#555\" stroke-width=\"1\"/>\n"
            if let image = images[frame.photo] {
                svg += "<image x=\"\(n(frame.x))\" y=\"\(n(frame.y))\" width=\"\(n(frame.width))\" height=\"\(n(frame.height))\" "
                    + "preserveAspectRatio=\"xMidYMid slice\" href=\"data:\(escape(image.mime));base64,\(image.bytes.base64EncodedString())\"/>\n"
            }
            svg += "<text x=\"\(n(frame.x + 4))\" y=\"\(n(frame.y + 16))\" fill=\"#000\" stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\">\(id)</text>\n</g>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// Escapes the five XML special characters, and drops characters XML 1.0 forbids.
    public static func escape(_ text: String) -> String {
        text.rewritingScalars { scalar in
            switch scalar {
            case "&": return "&amp;"
            case "<": return "&lt;"
            case ">": return "&gt;"
            case "\"": return "&quot;"
            case "'": return "&apos;"
            default:
                let v = scalar.value
                let allowed = v == 0x9 || v == 0xA || v == 0xD || (v >= 0x20 && v != 0xFFFE && v != 0xFFFF)
                return allowed ? nil : ""
            }
        }
    }

    /// The frame's placeholder colour (re-checked: the answer is outside input to the CLI),
    /// else its `dims` tint.
    static func fill(_ frame: LayoutFrame) -> String {
        frame.color.flatMap(PlaceholderColor.normalised) ?? fill(frame.dims)
    }

    static func fill(_ dims: DimensionSource) -> String {
        switch dims {
        case .decoded: return "#cfe3cf"
        case .provider: return "#cfd8e8"
        case .unknown: return "#e8d6cf"
        }
    }

    static func n(_ value: Double) -> String { LayoutTable.number(value) }
}
