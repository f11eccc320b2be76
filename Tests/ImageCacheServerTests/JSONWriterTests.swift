import Foundation
@testable import ImageCacheServer
import ImageCacheProtocol
import NIOCore
import Testing

/// The raw writer behind the hot answers writes text that any JSON parser reads back as
/// what was written, within the bound it promises.
@Suite("JSONWriter", .timeLimit(.minutes(1)))
struct JSONWriterTests {
    private func written(bound: Int, _ body: (inout JSONWriter) -> Void) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeJSON(bound: bound, body)
        return Array(buffer.readableBytesView)
    }

    @Test("every control character, quote, backslash and non-ASCII text round-trips as a string, in its bound")
    func strings() throws {
        let everyControl = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        let texts = ["", "plain", "/slashes/stay/", "\"", "\\", everyControl, "é🙂 mixed\n\"end\\", String(repeating: "\u{01}", count: 300)]
        for text in texts {
            let bytes = written(bound: JSONWriter.stringBound(text)) { $0.string(text) }
            #expect(bytes.count <= JSONWriter.stringBound(text))
            #expect(!bytes.contains(0x0A))
            let decoded = try JSONDecoder().decode(String.self, from: Data(bytes))
            #expect(decoded == text)
        }
    }

    @Test("integers at both ends of Int are written in their bound", arguments: [0, 7, -1, 10, 99, 100, Int.max, Int.min])
    func integers(value: Int) throws {
        let bytes = written(bound: JSONWriter.intBound) { $0.int(value) }
        #expect(bytes.count <= JSONWriter.intBound)
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }

    @Test("a generic result with the longest ids still fits its envelope's bound",
          arguments: [RequestID.int(Int.min), .int(Int.max), .string(String(repeating: "\u{02}", count: 40))])
    func envelopeBound(id: RequestID) throws {
        let line = try MessageEncoder.success(id: id, encoded: EncodedResult([1, 2, 3])).bytes
        let object = try #require(try JSONSerialization.jsonObject(with: Data(Array(line.readableBytesView))) as? [String: Any])
        #expect(object["result"] as? [Int] == [1, 2, 3])
        switch id {
        case .int(let number): #expect((object["id"] as? NSNumber)?.int64Value == Int64(number))
        case .string(let text): #expect(object["id"] as? String == text)
        }
    }
}
