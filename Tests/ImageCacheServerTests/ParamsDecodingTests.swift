import ImageCacheServer
import Testing
import TestSupport

/// Typed params as later methods will declare them: nested objects, arrays, optionals.
/// A handler registered with such a type gets -32602 with the exact field on any mistake.
@Suite("Typed params", .timeLimit(.minutes(1)))
struct ParamsDecodingTests {
    struct Author: Codable, Sendable { var name: String; var likes: Int? }
    struct Params: RPCParams { var photos: [String]; var author: Author?; var size: Int? }

    enum Typed: RPCMethod {
        typealias Params = ParamsDecodingTests.Params
        typealias Result = Int
        static let name: MethodName = "test.typed"
    }

    private func call(_ params: String) async throws -> [String: Any] {
        return try await TestServer.with(extend: { router in
            router.register(Typed.self, .task { params, _ in params.photos.count + (params.size ?? 0) })
        }) { server in
            let client = try await server.connect()
            let answer = try await client.call(#"{"jsonrpc":"2.0","id":1,"method":"test.typed","params":\#(params)}"#)
            await client.close()
            return answer
        }
    }

    @Test("well-typed params reach the handler")
    func valid() async throws {
        let answer = try await call(#"{"photos":["a","b"],"author":{"name":"x","likes":null},"size":3}"#)
        #expect(answer["result"] as? Int == 5)
    }

    @Test("mistakes name the exact field", arguments: [
        (#"{"photos":["a",2]}"#, "photos[1]"),
        (#"{"photos":[],"author":{"name":"x","extra":1}}"#, "author.extra"),
        (#"{"photos":[],"author":{}}"#, "author.name"),
        (#"{"photos":[],"size":"3"}"#, "size"),
        (#"{"photos":[],"size":1e30}"#, "size"),
        (#"{"author":{"name":"x"}}"#, "photos"),
        (#"{"photos":null}"#, "photos"),
    ])
    func fieldNamed(params: String, field: String) async throws {
        let answer = try await call(params)
        #expect(answer.errorCode == -32602)
        #expect(answer.errorKind == "invalid_params")
        #expect(answer.errorData["field"] as? String == field)
    }
}
