import Foundation
@testable import ImageCacheServer
import ImageCacheKit
import ImageCacheProtocol
import NIOCore
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
            let reference = try JSONSerialization.jsonObject(with: MessageEncoder.encoder.encode(result)) as? NSDictionary
            let mine = try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary
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
        let decoded = try JSONDecoder().decode(ThumbnailShowResult.self,
                                               from: JSONSerialization.data(withJSONObject: try #require(object["result"])))
        #expect(decoded == result)
    }

    @Test("an answer whose data comes from a sealed file is, byte for byte, the line written from a buffer",
          arguments: [RequestID.int(7), .string("s \"q\"")])
    func answerFromFile(id: RequestID) throws {
        let text = Data((0..<5000).map { UInt8($0 % 251) }).base64EncodedString()
        let result = ThumbnailShowResult(slot: 2, view: "side", photo: "unsplash:x", path: "/c/y", width: 5, height: 6,
                                         bytes: 5000, mime: "image/png", source: .memory, data: text)
        guard case .lineEnd(let file) = InlineBase64.make(text) else {
            Issue.record("no sealed file could be made")
            return
        }
        var withoutData = result
        withoutData.data = nil
        let message = ThumbnailMethods.answer(id: id, .init(result: withoutData, dataFile: file))
        #expect(message.rest === file)
        #expect(message.size == message.bytes.readableBytes + file.count)
        let sent = Array(message.bytes.readableBytesView) + file.contents()
        #expect(sent == Array(ThumbnailMethods.answer(id: id, .init(result: result)).bytes.readableBytesView))
    }
}
