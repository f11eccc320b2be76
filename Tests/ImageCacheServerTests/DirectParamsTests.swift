import Foundation
import ImageCacheProtocol
import Testing
@testable import ImageCacheServer

/// `thumbnail.show`'s params read by hand (`DirectParams`) are exactly what the strict decoder
/// reads; anything the hand path does not take is left to the strict decoder, so errors keep
/// their wording and field.
@Suite("Params: the hand path of thumbnail.show agrees with the strict decoder", .timeLimit(.minutes(1)))
struct DirectParamsTests {
    static func members(_ text: String) throws -> [String: JSONValue] {
        let value = try Array(text.utf8).withUnsafeBytes { raw in try JSONLineParser.parse(raw) }
        guard case .object(let members) = value else { throw CocoaError(.coderInvalidValue) }
        return members
    }

    /// The plain shapes a grid client sends: the hand path takes each one.
    static let plain: [String] = [
        #"{"slot":0,"photo":"unsplash:a"}"#,
        #"{"slot":3,"url":"http://127.0.0.1:8/x.jpg","size":256}"#,
        #"{"slot":12,"photo":"pixabay:1","size":512,"inline":true,"view":"sidebar"}"#,
        #"{"slot":1,"url":"https://e.test/a?b=c","inline":false}"#,
        #"{"view":"main","slot":2,"photo":"flickr:9"}"#,
        // Shapes that validation (not decoding) refuses are still decoded alike.
        #"{"slot":-1,"photo":""}"#,
        #"{"slot":1,"photo":"x","size":0,"view":""}"#,
    ]

    /// Everything else: the hand path declines, the strict decoder answers (a value or an error).
    static let declined: [String] = [
        #"{}"#,
        #"{"photo":"unsplash:a"}"#,
        #"{"slot":1}"#,
        #"{"slot":1,"photo":"a","url":"http://e.test/x"}"#,
        #"{"slot":1,"photo":"a","url":null}"#,
        #"{"slot":1,"photo":null,"url":"http://e.test/x"}"#,
        #"{"slot":1,"photo":"a","size":null}"#,
        #"{"slot":1,"photo":"a","inline":null,"view":null}"#,
        #"{"slot":"1","photo":"a"}"#,
        #"{"slot":1.5,"photo":"a"}"#,
        #"{"slot":1,"photo":7}"#,
        #"{"slot":1,"photo":"a","size":"256"}"#,
        #"{"slot":1,"photo":"a","inline":1}"#,
        #"{"slot":1,"photo":"a","view":3}"#,
        #"{"slot":1,"photo":"a","extra":true}"#,
        #"{"slot":1,"photo":"a","Slot":1}"#,
    ]

    @Test("plain params: the hand path gives the strict decoder's value", arguments: plain)
    func sameValue(_ text: String) throws {
        let members = try Self.members(text)
        let direct = try #require(ThumbnailShowParams.direct(members))
        let strict = try StrictParamsDecoder.decodeThroughContainers(ThumbnailShowParams.self, from: .object(members))
        #expect(direct == strict)
        #expect(try StrictParamsDecoder.decode(ThumbnailShowParams.self, from: .object(members)) == strict)
    }

    @Test("anything else: the hand path declines and the outcome is the strict decoder's", arguments: declined)
    func declines(_ text: String) throws {
        let members = try Self.members(text)
        #expect(ThumbnailShowParams.direct(members) == nil)
        let strict = Result { () throws(RPCError) in
            try StrictParamsDecoder.decodeThroughContainers(ThumbnailShowParams.self, from: .object(members))
        }
        let decoded = Result { () throws(RPCError) in try StrictParamsDecoder.decode(ThumbnailShowParams.self, from: .object(members)) }
        switch (strict, decoded) {
        case (.success(let a), .success(let b)): #expect(a == b)
        case (.failure(let a), .failure(let b)):
            #expect(a.message == b.message)
            #expect(a.code == b.code && a.data.field == b.data.field)
        default: Issue.record("the two paths disagree on \(text): \(strict) vs \(decoded)")
        }
    }
}
