import Foundation
@testable import ImageCacheServer
import ImageCacheKit
import ImageCacheProtocol
import NIOCore
import TestSupport
import Testing

/// The hand-written JSON of `thumbnail.show`'s answer says exactly what Foundation's encoder
/// would: same members, same values, one line.
@Suite("thumbnail.show answers written by hand", .timeLimit(.minutes(1)))
struct ThumbnailAnswerEncodingTests {
    @Test("every shape of the result decodes back to itself and never holds a raw newline")
    func roundTrips() throws {
        let awkward = "/tmp/c/\"quoted\"\\back\nline\ttab\u{01}é🙂/x.jpg"
        let results = [
            ThumbnailShowResult(slot: 7, view: "main", photo: "unsplash:abc", path: "/var/cache/imagecached/data/ab/cd",
                                width: 256, height: 171, bytes: 30_682, mime: "image/jpeg", source: .memory, data: nil),
            ThumbnailShowResult(slot: -1, view: "side \"panel\"", photo: nil, path: awkward,
                                width: 1, height: 2, bytes: 0, mime: "image/png", source: .network,
                                data: Data((0..<3000).map { UInt8($0 % 256) }).base64EncodedString()),
            ThumbnailShowResult(slot: Int.min, view: "", photo: "\u{00}\u{1F}", path: "", width: Int.max, height: 0,
                                bytes: Int.max, mime: "", source: .disk, data: ""),
        ]
        for result in results {
            var buffer = ByteBuffer()
            buffer.writeJSON(bound: result.jsonBound) { result.writeJSON(to: &$0) }
            let bytes = Array(buffer.readableBytesView)
            #expect(!bytes.contains(0x0A))
            let decoded = try JSONDecoder().decode(ThumbnailShowResult.self, from: Data(bytes))
            #expect(decoded == result)
            let reference = try #require(try JSONSerialization.jsonObject(with: MessageEncoder.encoder.encode(result)) as? NSDictionary)
            let mine = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
            #expect(mine == reference)
        }
    }

    @Test("the whole answer line is one JSON-RPC response with the request's id, whatever its shape",
          arguments: [RequestID.int(42), .string("plain"), .string("needs \"escaping\"\n\u{01}")])
    func answerLine(id: RequestID) throws {
        let result = ThumbnailShowResult(slot: 1, photo: nil, path: "/c/x", width: 2, height: 3, bytes: 4,
                                         mime: "image/jpeg", source: .disk, data: "QUJD")
        let line = ThumbnailMethods.answer(id: id, .init(result: result)).bytes
        let bytes = Array(line.readableBytesView)
        #expect(bytes.last == 0x0A && bytes.dropLast().contains(0x0A) == false)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["jsonrpc"] as? String == "2.0")
        switch id {
        case .int(let number): #expect(object["id"] as? Int == number)
        case .string(let text): #expect(object["id"] as? String == text)
        }
        let decoded = try #require(object["result"] as? [String: Any]).decoded(as: ThumbnailShowResult.self)
        #expect(decoded == result)
    }

    /// The bytes a client reads for `message`: its buffer, the file's part, then its tail.
    static func sent(_ message: OutboundMessage) -> [UInt8] {
        var bytes = Array(message.bytes.readableBytesView)
        if let file = message.rest { bytes += file.contents().prefix(message.restBytes) }
        if let tail = message.tail { bytes += Array(tail.readableBytesView) }
        return bytes
    }

    /// A thumbnail's delivery from memory entry `entry`, with its bytes.
    static func delivery(_ bytes: Data, entry: UInt64?) -> ThumbnailDelivery {
        ThumbnailDelivery(path: "/c/y", width: 5, height: 6, bytes: bytes.count, mime: "image/png", source: .memory,
                          data: bytes, memoryEntry: entry)
    }

    static let params = ThumbnailShowParams(slot: 2, image: .url("https://img.example/y.png"), inline: true, view: "side")

    @Test("an answer whose data comes from a sealed file is, byte for byte, the line written from a buffer",
          arguments: [RequestID.int(7), .string("s \"q\"")])
    func answerFromFile(id: RequestID) throws {
        let bytes = Data((0..<5000).map { UInt8($0 % 251) })
        let inlineData = InlineDataCache(costLimit: 1 << 20)
        let shown = ThumbnailMethods.result(of: Self.delivery(bytes, entry: 1), params: Self.params, inlineData: inlineData)
        let file = try #require(shown.dataFile, "no sealed file could be made")
        #expect(shown.result.data == nil)
        // The file holds the payload's base64 and the line's end its writer produced.
        #expect(file.contents() == Array(bytes.base64EncodedString().utf8) + shown.fileLineEnd)
        let message = ThumbnailMethods.answer(id: id, shown)
        #expect(message.rest === file && message.restBytes == file.count && message.tail == nil)
        #expect(message.size == message.bytes.readableBytes + file.count)
        var inline = shown.result
        inline.data = bytes.base64EncodedString()
        #expect(Self.sent(message) == Array(ThumbnailMethods.answer(id: id, .init(result: inline)).bytes.readableBytesView))
    }

    @Test("a kept file whose line end is not this answer's own (members reordered since) sends its data alone, then the answer's end")
    func foreignLineEndNeverCorrupts() throws {
        let bytes = Data((0..<3000).map { UInt8($0 % 199) })
        // A copy made for an answer shape whose end differed (a member after `data`, say).
        let foreignEnd = Array(#"","cached":true}}"#.utf8) + [0x0A]
        let file = try #require(SealedMemoryFile.make(Array(bytes.base64EncodedString().utf8) + foreignEnd))
        var result = ThumbnailShowResult(slot: 2, view: "side", photo: nil, path: "/c/y", width: 5, height: 6,
                                         bytes: bytes.count, mime: "image/png", source: .memory, data: nil)
        let message = ThumbnailMethods.answer(id: .int(9), .init(result: result, dataFile: file, fileLineEnd: foreignEnd))
        #expect(message.restBytes == file.count - foreignEnd.count)
        #expect(message.size == Self.sent(message).count)
        result.data = bytes.base64EncodedString()
        let expected = Array(ThumbnailMethods.answer(id: .int(9), .init(result: result)).bytes.readableBytesView)
        #expect(Self.sent(message) == expected)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(Self.sent(message))) as? [String: Any])
        let answered = try #require(object["result"] as? [String: Any])
        #expect(answered["cached"] == nil)
    }

    @Test("the server keeps one copy per memory entry: made once, new bytes get their own, data not from memory is not kept")
    func keptPerMemoryEntry() throws {
        let inlineData = InlineDataCache(costLimit: 1 << 20)
        let first = Data((0..<2000).map { UInt8($0 % 97) })
        let a = ThumbnailMethods.result(of: Self.delivery(first, entry: 1), params: Self.params, inlineData: inlineData)
        let again = ThumbnailMethods.result(of: Self.delivery(first, entry: 1), params: Self.params, inlineData: inlineData)
        #expect(a.dataFile != nil && again.dataFile === a.dataFile)
        #expect(inlineData.statistics.entries == 1 && inlineData.statistics.bytes == a.dataFile?.count)
        // Another entry (new bytes for the same key): another copy, of its own bytes.
        let second = Data((0..<2000).map { UInt8($0 % 89) })
        let b = ThumbnailMethods.result(of: Self.delivery(second, entry: 2), params: Self.params, inlineData: inlineData)
        let fileB = try #require(b.dataFile)
        #expect(fileB !== a.dataFile)
        #expect(fileB.contents().prefix(fileB.count - b.fileLineEnd.count).elementsEqual(second.base64EncodedString().utf8))
        // From the disk or the network: encoded for this answer, not kept.
        let c = ThumbnailMethods.result(of: Self.delivery(first, entry: nil), params: Self.params, inlineData: inlineData)
        #expect(c.dataFile == nil && c.result.data == first.base64EncodedString())
        #expect(inlineData.statistics.entries == 2)
        inlineData.removeAll()
        #expect(inlineData.statistics.entries == 0)
    }

    @Test("with no descriptor for a sealed file, the copy is kept as text and answered from a buffer")
    func textWhenNoFile() throws {
        let inlineData = InlineDataCache(costLimit: 1 << 20, makeFile: { _ in nil })
        let bytes = Data((0..<1000).map { UInt8($0 % 13) })
        let shown = ThumbnailMethods.result(of: Self.delivery(bytes, entry: 5), params: Self.params, inlineData: inlineData)
        #expect(shown.dataFile == nil && shown.result.data == bytes.base64EncodedString())
        #expect(inlineData.statistics.entries == 1)
        let message = ThumbnailMethods.answer(id: .int(1), shown)
        #expect(message.rest == nil)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(Self.sent(message))) as? [String: Any])
        #expect((object["result"] as? [String: Any])?["data"] as? String == bytes.base64EncodedString())
    }
}
