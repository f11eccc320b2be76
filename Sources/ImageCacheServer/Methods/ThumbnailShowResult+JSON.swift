import Foundation
import ImageCacheKit

extension ThumbnailShowResult: JSONWritable {
    /// Writes the result's JSON by hand, in the order `encode(to:)` uses, straight into the
    /// response's buffer.
    ///
    /// A memory hit is the daemon's hottest answer, and Foundation's encoder costs more than
    /// the rest of the hit, most of all for `inline: true`, where it walks a 40 KB base64
    /// string character by character; base64 needs no escaping, so it is copied as it is, and
    /// only once: into the buffer that goes to the socket. A test checks this against
    /// `JSONEncoder`'s output for every field's shape.
    func writeJSON(to out: inout JSONWriter) {
        guard let data else {
            writeMembersBeforeData(to: &out)
            out.raw("}")
            return
        }
        writeJSONUpToData(to: &out)
        // Base64's alphabet (A–Z a–z 0–9 + / =) never needs escaping.
        out.unescaped(data)
        writeJSONAfterData(to: &out)
    }

    /// Writes the result up to the opening quote of `data`: its base64 text then comes from
    /// a sealed file (`InlineDataCache`), and the rest from `writeJSONAfterData`.
    func writeJSONUpToData(to out: inout JSONWriter) {
        writeMembersBeforeData(to: &out)
        out.raw(#","data":""#)
    }

    /// Writes what follows `data`'s base64 text: its closing quote and the rest of the result.
    /// An inline answer sent from a sealed file compares this with the end the file holds.
    func writeJSONAfterData(to out: inout JSONWriter) {
        out.raw("\"}")
    }

    private func writeMembersBeforeData(to out: inout JSONWriter) {
        out.raw(#"{"slot":"#); out.int(slot)
        out.raw(#","view":"#); out.string(view)
        out.raw(#","photo":"#)
        if let photo { out.string(photo) } else { out.raw("null") }
        out.raw(#","path":"#); out.string(path)
        out.raw(#","width":"#); out.int(width)
        out.raw(#","height":"#); out.int(height)
        out.raw(#","bytes":"#); out.int(bytes)
        out.raw(#","mime":"#); out.string(mime)
        out.raw(#","source":"#); out.string(source.rawValue)
    }

    /// Most bytes `writeJSON` writes: the buffer is sized once.
    var jsonBound: Int {
        let strings = JSONWriter.stringBound(view) + JSONWriter.stringBound(path) + JSONWriter.stringBound(mime)
            + JSONWriter.stringBound(source.rawValue) + (photo.map(JSONWriter.stringBound) ?? 0)
        return 128 + 4 * JSONWriter.intBound + strings + (data?.utf8.count ?? 0)
    }
}
