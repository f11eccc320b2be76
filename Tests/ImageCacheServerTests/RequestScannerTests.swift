import Foundation
import ImageCacheProtocol
import NIOCore
import NIOEmbedded
import Logging
import Testing
import TestSupport
@testable import ImageCacheServer

/// A plain `thumbnail.show` line read by `RPCRouter.scan` is exactly the request the general
/// path (`IncomingMessageParser`, then `StrictParamsDecoder`) reads from it, validated alike;
/// anything the scanner does not take is left to the general path, so errors keep their
/// wording and field.
@Suite("Request scanner: the fast path of thumbnail.show agrees with the general path", .timeLimit(.minutes(1)))
struct RequestScannerTests {
    /// What a route's arrival step was given; thrown so the step stops there.
    struct Captured: Error { var params: ThumbnailShowParams }

    struct Request: Equatable {
        var id: RequestID
        var method: String
        var params: ThumbnailShowParams
    }

    static let router: RPCRouter = {
        var router = RPCRouter()
        router.register(Methods.ThumbnailShow.self, .ordered(arrival: { params, _ -> Arrival<Int> in
            throw Captured(params: params)
        }, run: { _, _ in .sent }))
        router.register(Methods.Hello.self, .inline { _, _ in .result(HelloResult(version: "0", providers: [])) })
        return router
    }()

    static let session = Session(id: 1, peer: nil, channel: EmbeddedChannel(), logger: Logger(label: "test"))

    /// The request as the scanner reads it (its params validated before the arrival step, as
    /// on the general path), or the error validation answers; nil when it declines.
    static func scanned(_ line: String) -> Result<Request, RPCError>? {
        guard let scanned = Array(line.utf8).withUnsafeBytes({ router.scan($0) }) else { return nil }
        let context = RequestContext(session: session, requestID: scanned.id, method: scanned.method)
        do {
            _ = try scanned.arrive(context)
        } catch let captured as Captured {
            return .success(Request(id: scanned.id, method: scanned.method, params: captured.params))
        } catch let error as RPCError {
            return .failure(error)
        } catch {
            Issue.record("the arrival step threw \(error)")
            return nil
        }
        Issue.record("the arrival step returned instead of being given the params")
        return nil
    }

    /// The request as the general path reads it (decoded, then validated), or the error it answers.
    static func general(_ line: String) -> Result<Request, RPCError> {
        switch IncomingMessageParser.parse(ByteBuffer(string: line)) {
        case nil: return .failure(RPCError(.parseError, "blank"))
        case .failure(let failure)?: return .failure(failure.error)
        case .success(.notification)?: return .failure(RPCError(.invalidRequest, "notification"))
        case .success(.request(let id, let method, let params))?:
            return Result { () throws(RPCError) in
                Request(id: id, method: method, params: try StrictParamsDecoder.decodeAndValidate(ThumbnailShowParams.self, from: params))
            }
        }
    }

    static func line(_ params: String, id: String = "7") -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"thumbnail.show","params":\#(params)}"#
    }

    /// The plain shapes a grid client sends: the scanner takes each one.
    static let plain: [String] = [
        line(#"{"slot":0,"photo":"unsplash:a"}"#),
        line(#"{"slot":3,"url":"http://127.0.0.1:8/x.jpg","size":256}"#),
        line(#"{"slot":12,"photo":"pixabay:1","size":512,"inline":true,"view":"sidebar"}"#),
        line(#"{"slot":1,"url":"https://e.test/a?b=c","inline":false}"#, id: #""req-1""#),
        line(#"{"view":"main","slot":2,"photo":"flickr:9"}"#, id: "-3"),
        line(#"{"slot":999999999999999999,"photo":"a"}"#, id: "0"),
        // JSONEncoder writes every `/` as `\/`; the two-character escapes are read.
        line(#"{"slot":5,"url":"http:\/\/127.0.0.1:8\/a b.jpg?q=\"x\"&r=\\","size":128}"#, id: #""a\/b\n\t\r\b\f""#),
        // Shapes that validation (not decoding) refuses are still read alike.
        line(#"{"slot":-1,"photo":""}"#),
        line(#"{"slot":1,"photo":"x","size":0,"view":""}"#, id: #""""#),
        // Params before the method, as Foundation's JSONEncoder may write them.
        #"{"params":{"view":"v","slot":1,"photo":"a"},"jsonrpc":"2.0","id":1,"method":"thumbnail.show"}"#,
        // JSON's whitespace anywhere between tokens, members in another order.
        " { \"method\":\"thumbnail.show\", \"jsonrpc\":\"2.0\", \"params\" : {\"slot\":1,\"photo\":\"a\"}, \"id\" : 1 } ",
        "{\"id\":5,\r\n\t\"jsonrpc\" : \"2.0\" ,\"method\":\"thumbnail.show\",\"params\":{ \"slot\" : 4 , \"inline\" : true , \"url\" : \"http://e.test/x\" }}\n",
    ]

    /// Lines the scanner leaves to the general path (whatever that answers).
    static let declined: [String] = [
        // The envelope.
        #"{"jsonrpc":"2.0","method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,  // a notification
        #"{"jsonrpc":"2.0","id":1,"method":"thumbnail.show"}"#,  // no params
        #"{"id":1,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,  // no version
        #"{"jsonrpc":"2.1","id":1,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":1,"id":2,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"thumbnail.show","method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"thumbnail.show","params":{"slot":1,"photo":"a"},"params":{"slot":2,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"thumbnail.show","params":{"slot":1,"photo":"a"},"extra":0}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"hello","params":{}}"#,  // a route without a scanner
        #"{"jsonrpc":"2.0","id":1,"method":"thumbnail.shows","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":1.0,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":-0,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":01,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":1234567890123456789,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":null,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":"a\u0041","method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":"a\x","method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc\/":"2.0","id":1,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"thumbnail\/show","params":{"slot":1,"photo":"a"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}} x"#,
        #"{"jsonrpc":"2.0","id":1,"params":{"slot":1,"photo":"a","extra":{"a":[1,{"b":"}"}]}},"method":"thumbnail.show"}"#,
        #"{"jsonrpc":"2.0","id":1,"params":{"slot":1,"photo":"a"},"params":{"slot":1,"photo":"a"},"method":"thumbnail.show"}"#,
        #"{"jsonrpc":"2.0","id":1,"params":{"slot":1,"photo":"a"],"method":"thumbnail.show"}"#,
        #"{"jsonrpc":"2.0","id":1,"params":{"slot":1,"photo":"a},"method":"thumbnail.show"}"#,
        #"{"jsonrpc":"2.0","id":1,"params":[{"slot":1,"photo":"a"}],"method":"thumbnail.show"}"#,
        #"{"jsonrpc":"2.0","id":1,"params":{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{}}}}}}}},"slot":1,"photo":"a"},"method":"thumbnail.show"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}"#,
        #"[{"jsonrpc":"2.0","id":1,"method":"thumbnail.show","params":{"slot":1,"photo":"a"}}]"#,
        "",
        // The params.
        line(#"{}"#),
        line(#"[1,"a"]"#),
        line(#"null"#),
        line(#"{"photo":"unsplash:a"}"#),
        line(#"{"slot":1}"#),
        line(#"{"slot":1,"photo":"a","url":"http://e.test/x"}"#),
        line(#"{"slot":1,"photo":"a","url":null}"#),
        line(#"{"slot":1,"photo":"a","size":null}"#),
        line(#"{"slot":1,"photo":"a","inline":null}"#),
        line(#"{"slot":"1","photo":"a"}"#),
        line(#"{"slot":1.5,"photo":"a"}"#),
        line(#"{"slot":1e1,"photo":"a"}"#),
        line(#"{"slot":1,"photo":7}"#),
        line(#"{"slot":1,"photo":"a","size":"256"}"#),
        line(#"{"slot":1,"photo":"a","inline":1}"#),
        line(#"{"slot":1,"photo":"a","inline":truex}"#),
        line(#"{"slot":1,"photo":"a","view":3}"#),
        line(#"{"slot":1,"photo":"a","extra":true}"#),
        line(#"{"slot":1,"photo":"a","Slot":1}"#),
        line(#"{"slot":1,"slot":2,"photo":"a"}"#),
        line(#"{"slot":1,"photo":"a\u002Fb"}"#),
        line(#"{"slot":1,"photo":"a\"}"#),
        line(#"{"slot":1,"photo":"caf\#u{E9}"}"#),
        line("{\"slot\":1,\"photo\":\"a\u{01}\"}"),
        line(#"{"slot":1,"photo":"a",}"#),
    ]

    @Test("plain lines: the scanner reads what the general path reads", arguments: plain)
    func sameRequest(_ line: String) throws {
        let scanned = try #require(Self.scanned(line))
        #expect(Self.general(line) == scanned)
    }

    /// A request as the client library writes it (`JSONEncoder`, members in declaration
    /// order, every `/` escaped): the line every grid client here sends takes the fast path.
    @Test("the client library's encoding of a show is scanned")
    func clientEncoding() throws {
        struct Envelope: Encodable {
            let jsonrpc = "2.0"
            let id: Int
            let method: String
            let params: ThumbnailShowParams
        }
        let params = ThumbnailShowParams(slot: 3, image: .url("http://127.0.0.1:8080/a/b.jpg?x=1"), size: 256, inline: true)
        let line = String(decoding: try JSONEncoder().encode(Envelope(id: 41, method: MethodName.thumbnailShow.rawValue, params: params)), as: UTF8.self)
        #expect(line.contains(#"http:\/\/"#), "\(line)")
        let scanned = try #require(Self.scanned(line))
        #expect(scanned == .success(Request(id: .int(41), method: MethodName.thumbnailShow.rawValue, params: params)))
        #expect(Self.general(line) == scanned)
    }

    @Test("anything else: the scanner declines", arguments: declined)
    func declines(_ line: String) throws {
        #expect(Self.scanned(line) == nil)
    }

    /// Random edits of plain lines: whenever the scanner accepts one, the general path reads
    /// the same request. Enough edits survive for the check to bite (a scanner that accepts
    /// what it should not would be caught; one that declines everything fails the count).
    @Test("fuzzed lines: never a different request")
    func fuzz() throws {
        var random = SplitMix64(seed: 0x5CA7_7E55)
        let alphabet = Array(#"{}[]":,.-+0123456789eE \tnulltruefalse\\ab/\"#.utf8)
        var accepted = 0
        for round in 0..<20_000 {
            var bytes = Array(Self.plain[round % Self.plain.count].utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                default: bytes[at] = alphabet.randomElement(using: &random)!
                }
                if bytes.isEmpty { break }
            }
            let line = String(decoding: bytes, as: UTF8.self)
            guard let scanned = Self.scanned(line) else { continue }
            accepted += 1
            let general = Self.general(line)
            #expect(general == scanned, "\(line)")
            if general != scanned { return }
        }
        #expect(accepted > 1_000, "only \(accepted) of the fuzzed lines were scanned")
    }
}
