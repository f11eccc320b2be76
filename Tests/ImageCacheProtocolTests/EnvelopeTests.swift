import Foundation
import ImageCacheProtocol
import Testing

@Suite("JSON-RPC envelope", .timeLimit(.minutes(1)))
struct EnvelopeTests {
    @Test("every error kind round-trips through its code")
    func errorCodes() {
        for kind in ErrorKind.allCases {
            #expect(ErrorKind(code: kind.code) == kind)
        }
        #expect(ErrorKind(code: 42) == nil)
    }

    @Test("an error answer encodes code, message and data.kind")
    func errorShape() throws {
        let response = RPCResponse(id: .int(7), error: RPCError(.queryTooShort, "query must have at least 3 characters", field: "query"))
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(response)) as? [String: Any]
        let error = try #require(json?["error"] as? [String: Any])
        #expect(error["code"] as? Int == 1001)
        #expect((error["data"] as? [String: Any])?["kind"] as? String == "query_too_short")
        #expect((error["data"] as? [String: Any])?["field"] as? String == "query")
        #expect(json?["id"] as? Int == 7)
        #expect(json?["result"] == nil)
    }

    @Test("an unknown id is encoded as null")
    func nullID() throws {
        let text = String(decoding: try JSONEncoder().encode(RPCResponse(id: nil, error: RPCError(.parseError, "not JSON"))), as: UTF8.self)
        #expect(text.contains("\"id\":null"))
    }

    @Test("ids are strings or integers, nothing else")
    func ids() throws {
        #expect(try JSONDecoder().decode(RequestID.self, from: Data(#""a""#.utf8)) == .string("a"))
        #expect(try JSONDecoder().decode(RequestID.self, from: Data(#"3"#.utf8)) == .int(3))
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(RequestID.self, from: Data(#"[1]"#.utf8))
        }
    }
}
