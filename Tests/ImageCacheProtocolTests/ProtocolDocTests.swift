import Foundation
import ImageCacheProtocol
import Testing

/// docs/protocol.md stays true to the types: every JSON example under a method's heading
/// decodes (params strictly, as the daemon would), and every result example is exactly what
/// the type encodes, field for field, null for null.
@Suite("docs/protocol.md examples", .timeLimit(.minutes(1)))
struct ProtocolDocTests {
    /// A fenced JSON block and the `###` heading it sits under.
    struct Example {
        var heading: String
        var text: String
    }

    static func examples() throws -> [Example] {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/protocol.md")
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        var heading = ""
        var block: [String]?
        var found: [Example] = []
        for line in lines {
            if line.hasPrefix("### ") { heading = String(line.dropFirst(4)) }
            if line == "```json" { block = []; continue }
            if line == "```", let body = block {
                found.append(Example(heading: heading, text: body.joined(separator: "\n")))
                block = nil
                continue
            }
            block?.append(line)
        }
        return found
    }

    /// The params part (before the `→` line) and the result part (after it); a block
    /// without an arrow is a result alone.
    static func split(_ text: String) -> (params: String?, result: String) {
        guard let arrow = text.range(of: "\n→") ?? (text.hasPrefix("→") ? text.range(of: "→") : nil) else { return (nil, text) }
        return (String(text[..<arrow.lowerBound]), String(text[arrow.upperBound...]))
    }

    func check<M: RPCMethod>(_ method: M.Type, _ example: Example) throws {
        let (params, result) = Self.split(example.text)
        if let params, !params.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            _ = try StrictParamsDecoder.decodeAndValidate(M.Params.self, from: jsonValue(params))
        }
        let shown = try jsonValue(result)
        let typed = try shown.decode(as: M.Result.self)
        #expect(try JSONValue(encoding: typed) == shown, "\(example.heading): the result example differs from what \(M.Result.self) encodes")
    }

    @Test("every method example decodes, and every result example is what its type encodes")
    func methodExamples() throws {
        let examples = try Self.examples()
        var checked = Set<String>()
        for example in examples {
            switch example.heading {
            case "hello": try check(Methods.Hello.self, example)
            case "search": try check(Methods.Search.self, example)
            case "photo.get": try check(Methods.PhotoGet.self, example)
            case "thumbnail.show": try check(Methods.ThumbnailShow.self, example)
            case "prefetch": try check(Methods.Prefetch.self, example)
            case "download": try check(Methods.Download.self, example)
            case "download.status, download.watch": try check(Methods.DownloadStatus.self, example)
            case "layout": try check(Methods.Layout.self, example)
            case "stats": try check(Methods.Stats.self, example)
            case "Photo":
                let shown = try jsonValue(example.text)
                #expect(try JSONValue(encoding: shown.decode(as: Photo.self)) == shown)
            default: continue
            }
            checked.insert(example.heading)
        }
        #expect(checked == ["hello", "search", "photo.get", "thumbnail.show", "prefetch", "download",
                            "download.status, download.watch", "layout", "stats", "Photo"])
    }

    @Test("the error example is an RPCError with the kind the doc says")
    func errorExample() throws {
        let example = try #require(try Self.examples().first { $0.heading == "" && $0.text.hasPrefix("{\"code\"") })
        let error = try jsonValue(example.text).decode(as: RPCError.self)
        #expect(error.kind == .invalidParams && error.data.field == "pag")
        #expect(paramsError(SearchParams.self, #"{"query": "cats", "pag": 2}"#) == error)
    }
}
