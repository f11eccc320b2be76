import Foundation
import ImageCacheServer
import Testing
import TestSupport

/// Every way a line can be wrong gets the protocol's error (docs/protocol.md, "Framing and
/// JSON-RPC" and "Errors"), and the connection keeps serving afterwards (except for an
/// overlong line, which closes it by contract).
@Suite("Framing and request validation", .timeLimit(.minutes(2)))
struct FramingAndValidationTests {
    /// Sends `line`, expects one error answer, then checks the connection still answers hello.
    private func expectError(_ line: [UInt8], code: Int, kind: String, idIsNull: Bool = true) async throws -> [String: Any] {
        return try await TestServer.with { server in
            let client = try await server.connect()
            try await client.send(bytes: line + [UInt8(ascii: "\n")])
            let answer = try await client.readMessage()
            #expect(answer.errorCode == code)
            #expect(answer.errorKind == kind)
            #expect(((answer["error"] as? [String: Any])?["message"] as? String)?.isEmpty == false)
            if idIsNull { #expect(answer.idIsNull) }
            let hello = try await client.call(#"{"jsonrpc":"2.0","id":99,"method":"hello"}"#)
            #expect(hello["id"] as? Int == 99)
            #expect(hello.resultObject?["name"] as? String == "imagecached")
            await client.close()
            return answer
        }
    }

    @Test("garbage bytes get -32700 with a null id, and the session goes on")
    func garbageBytes() async throws {
        _ = try await expectError([0xFF, 0xFE, 0x01, 0x80, 0x7B, 0x22, 0xC3, 0x28], code: -32700, kind: "parse_error")
    }

    @Test("text that is not JSON gets -32700")
    func invalidJSON() async throws {
        _ = try await expectError(Array(#"{"jsonrpc":"2.0","id":1,"method":"hello""#.utf8), code: -32700, kind: "parse_error")
    }

    @Test("NUL bytes inside and outside strings get -32700")
    func nulBytes() async throws {
        _ = try await expectError(Array(#"{"jsonrpc":"2.0","id":1,"method":"he"#.utf8) + [0] + Array(#"llo"}"#.utf8),
                                  code: -32700, kind: "parse_error")
        _ = try await expectError([0, 0, 0, 0], code: -32700, kind: "parse_error")
    }

    @Test("a JSON array (batch) gets -32600")
    func batch() async throws {
        _ = try await expectError(Array(#"[{"jsonrpc":"2.0","id":1,"method":"hello"}]"#.utf8), code: -32600, kind: "invalid_request")
    }

    @Test("a JSON scalar gets -32600")
    func scalar() async throws {
        _ = try await expectError(Array("42".utf8), code: -32600, kind: "invalid_request")
    }

    @Test("an id that is neither string nor integer gets -32600 with a null id", arguments: [
        #"1.5"#, #"true"#, #"null"#, #"{"a":1}"#, #"[1]"#,
    ])
    func badIDType(id: String) async throws {
        _ = try await expectError(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"hello"}"#.utf8), code: -32600, kind: "invalid_request")
    }

    @Test("a wrong jsonrpc version, a non-string method, a missing method or an unknown member get -32600 with the id echoed", arguments: [
        #"{"jsonrpc":"1.0","id":5,"method":"hello"}"#,
        #"{"id":5,"method":"hello"}"#,
        #"{"jsonrpc":"2.0","id":5,"method":7}"#,
        #"{"jsonrpc":"2.0","id":5}"#,
        #"{"jsonrpc":"2.0","id":5,"method":"hello","extra":true}"#,
    ])
    func wrongEnvelope(line: String) async throws {
        let answer = try await expectError(Array(line.utf8), code: -32600, kind: "invalid_request", idIsNull: false)
        #expect(answer["id"] as? Int == 5)
    }

    @Test("an unknown method gets -32601 with the request's id")
    func unknownMethod() async throws {
        let answer = try await expectError(Array(#"{"jsonrpc":"2.0","id":"abc","method":"no.such"}"#.utf8),
                                           code: -32601, kind: "method_not_found", idIsNull: false)
        #expect(answer["id"] as? String == "abc")
    }

    @Test("positional params get -32602 naming params")
    func positionalParams() async throws {
        let answer = try await expectError(Array(#"{"jsonrpc":"2.0","id":1,"method":"cancel","params":[3]}"#.utf8),
                                           code: -32602, kind: "invalid_params", idIsNull: false)
        #expect(answer.errorData["field"] as? String == "params")
    }

    @Test("an unknown param name gets -32602 naming it")
    func unknownParam() async throws {
        let answer = try await expectError(Array(#"{"jsonrpc":"2.0","id":1,"method":"hello","params":{"verbose":true}}"#.utf8),
                                           code: -32602, kind: "invalid_params", idIsNull: false)
        #expect(answer.errorData["field"] as? String == "verbose")
    }

    @Test("a param of the wrong type, or a missing one, gets -32602 naming it", arguments: [
        #"{"id":true}"#, #"{}"#, #"{"id":1.25}"#,
    ])
    func illTypedParam(params: String) async throws {
        let answer = try await expectError(Array(#"{"jsonrpc":"2.0","id":1,"method":"cancel","params":\#(params)}"#.utf8),
                                           code: -32602, kind: "invalid_params", idIsNull: false)
        #expect(answer.errorData["field"] as? String == "id")
    }

    @Test("deeply nested JSON is refused before decoding, and the daemon lives on")
    func deepNesting() async throws {
        let depth = 200_000
        _ = try await expectError(Array(repeating: UInt8(ascii: "["), count: depth) + Array(repeating: UInt8(ascii: "]"), count: depth),
                                  code: -32600, kind: "invalid_request")
        let inParams = #"{"jsonrpc":"2.0","id":1,"method":"hello","params":{"a":"# + String(repeating: "{\"a\":", count: 5000) + "1" + String(repeating: "}", count: 5001) + "}"
        _ = try await expectError(Array(inParams.utf8), code: -32600, kind: "invalid_request")
    }

    @Test("a line of 2 MiB gets -32600 and the connection is closed")
    func overlongLine() async throws {
        try await TestServer.with { server in
            let client = try await server.connect()
            let big = [UInt8](repeating: UInt8(ascii: "a"), count: 2 << 20)
            // The server may close before it has read it all, so the write may fail: that is fine.
            let writer = Task { try? await client.send(bytes: big + [UInt8(ascii: "\n")]) }
            let answer = try await client.readMessage()
            #expect(answer.errorCode == -32600)
            #expect(answer.errorKind == "invalid_request")
            #expect(answer.idIsNull)
            #expect(try await client.readLine() == nil)
            await writer.value
            // The daemon itself is fine.
            let other = try await server.connect()
            let hello = try await other.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
            #expect(hello.resultObject != nil)
            await other.close()
        }
    }

    @Test("a line exactly at max_request_bytes is accepted; one byte more is refused")
    func limitIsExact() async throws {
        let request = #"{"jsonrpc":"2.0","id":1,"method":"hello"}"#
        let padded = request + String(repeating: " ", count: 1024 - request.utf8.count)
        try await TestServer.with(limits: ServerLimits(maxRequestBytes: 1024)) { server in
            let client = try await server.connect()
            let ok = try await client.call(padded)
            #expect(ok.resultObject != nil)
            let refused = try await client.call(padded + " ")
            #expect(refused.errorCode == -32600)
            #expect(try await client.readLine() == nil)
        }
    }

    @Test("string and integer ids come back exactly as sent")
    func idsEchoed() async throws {
        try await TestServer.with { server in
            let client = try await server.connect()
            let a = try await client.call(#"{"jsonrpc":"2.0","id":"req-ü-1","method":"hello"}"#)
            #expect(a["id"] as? String == "req-ü-1")
            let b = try await client.call(#"{"jsonrpc":"2.0","id":-9007199254740993,"method":"hello"}"#)
            #expect((b["id"] as? NSNumber)?.int64Value == -9007199254740993)
            await client.close()
        }
    }

    @Test("notifications are never answered, even unknown or invalid ones")
    func notificationsUnanswered() async throws {
        try await TestServer.with { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","method":"hello"}"#)
            try await client.send(#"{"jsonrpc":"2.0","method":"no.such"}"#)
            try await client.send(#"{"jsonrpc":"2.0","method":"cancel","params":{"id":[]}}"#)
            try await client.send(#"{"jsonrpc":"2.0","method":"hello","params":[1]}"#)
            let answer = try await client.call(#"{"jsonrpc":"2.0","id":"last","method":"hello"}"#)
            #expect(answer["id"] as? String == "last")
            await client.close()
        }
    }

    @Test("blank lines are skipped; a final line without newline is answered at end of input")
    func blankLinesAndHalfClose() async throws {
        try await TestServer.with { server in
            let client = try await server.connect()
            try await client.send(bytes: Array("\n\r\n   \n".utf8) + Array(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#.utf8))
            try await client.shutdownOutput()
            let answer = try await client.readMessage()
            #expect(answer["id"] as? Int == 1)
            #expect(try await client.readLine() == nil)
        }
    }
}
