import Foundation
@testable import ImageCacheServer
import ImageCacheProtocol
import Testing

/// The hand-written JSON of a slot's notifications says exactly what Foundation's encoder
/// would: same members (absent ones absent), same values, one JSON-RPC line.
@Suite("thumbnail notifications written by hand", .timeLimit(.minutes(1)))
struct ThumbnailNotificationEncodingTests {
    static let awkward = "side \"panel\"\\back\nline\ttab\u{01}é🙂/x"

    static let dimensions = [
        ThumbnailDimensions(slot: 7, view: "main", photo: "unsplash:abc", width: 2400, height: 1600,
                            blurHash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj", color: "#a1b2c3"),
        ThumbnailDimensions(slot: -1, view: awkward, photo: nil, width: 1, height: 2),
        ThumbnailDimensions(slot: Int.min, view: "", photo: "\u{00}\u{1F}", width: Int.max, height: 0, blurHash: awkward),
        ThumbnailDimensions(slot: 3, view: "main", photo: "p", width: 5, height: 6, color: awkward),
    ]

    static let progress = [
        ThumbnailProgress(slot: 7, view: "main", photo: "flickr:1", received: 30_682, total: 120_000),
        ThumbnailProgress(slot: -1, view: awkward, photo: nil, received: 0, total: nil),
        ThumbnailProgress(slot: Int.max, view: "", photo: awkward, received: Int.max, total: Int.min),
    ]

    @Test("thumbnail.dimensions: every shape is the line Foundation's encoder writes", arguments: dimensions)
    func dimensionsLine(_ params: ThumbnailDimensions) throws {
        try Self.check(MessageEncoder.notification(params), params: params, priority: .essential)
    }

    @Test("thumbnail.progress: every shape is the line Foundation's encoder writes, and droppable", arguments: progress)
    func progressLine(_ params: ThumbnailProgress) throws {
        try Self.check(MessageEncoder.notification(params), params: params, priority: .progress)
    }

    /// One line ending in its only newline; the same object as the encoder's notification;
    /// the params decode back to themselves.
    static func check<P: RPCNotificationPayload & Equatable>(_ message: OutboundMessage, params: P,
                                                              priority: OutboundPriority) throws {
        let bytes = Array(message.bytes.readableBytesView)
        #expect(bytes.last == 0x0A && !bytes.dropLast().contains(0x0A))
        #expect(message.priority == priority)
        let reference = try MessageEncoder.notification(method: P.name.rawValue, params: params)
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(reference.bytes.readableBytesView)) as? NSDictionary)
        let mine = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
        #expect(mine == expected)
        let decoded = try JSONDecoder().decode(DecodedNotification<P>.self, from: Data(bytes))
        #expect(decoded.jsonrpc == "2.0" && decoded.method == P.name.rawValue && decoded.params == params)
    }
}

/// A notification line read back.
private struct DecodedNotification<P: Decodable>: Decodable {
    var jsonrpc: String
    var method: String
    var params: P
}
