import Foundation
import ImageCacheServer
import Testing
import TestSupport

/// SIGTERM's work inside the server: stop accepting, let in-flight work end within the grace
/// period, then abandon the rest safely (cancelled, connection closed).
@Suite("Graceful shutdown", .timeLimit(.minutes(2)))
struct ShutdownTests {
    @Test("shutdown stops accepting, cancels work still running after the grace period and closes the connections")
    func abandonsAfterGrace() async throws {
        let methods = TestMethods()
        // The test shuts the server down itself; `with`'s stop then finds nothing left to stop
        // and removes the socket file and the folder.
        try await TestServer.with(extend: { methods.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","id":1,"method":"test.block","params":{"key":"long"}}"#)
            try await methods.wait(for: "started:long")
            await server.server.shutdown(gracePeriod: .milliseconds(200))
            try await methods.wait(for: "cancelled:long")
            #expect(try await client.readLine() == nil)
            #expect(server.server.sessionCount == 0)
            await #expect(throws: (any Error).self) {
                _ = try await RawClient.connect(server.path)
            }
        }
    }

    @Test("shutdown with nothing in flight closes idle connections at once")
    func idleConnectionsClosed() async throws {
        try await TestServer.with { server in
            let client = try await server.connect()
            _ = try await client.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
            // An hour's grace: if shutdown waited it out, the suite's time limit would fail this.
            await server.server.shutdown(gracePeriod: .seconds(3600))
            #expect(try await client.readLine() == nil)
        }
    }
}
