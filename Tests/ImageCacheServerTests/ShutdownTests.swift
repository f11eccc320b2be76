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
        let server = try await TestServer.start { methods.register(in: &$0) }
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
        server.listener.removeSocketFile()
        try? FileManager.default.removeItem(atPath: server.folder)
    }

    @Test("shutdown with nothing in flight closes idle connections at once")
    func idleConnectionsClosed() async throws {
        let server = try await TestServer.start()
        let client = try await server.connect()
        _ = try await client.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
        // An hour's grace: if shutdown waited it out, the suite's time limit would fail this.
        await server.server.shutdown(gracePeriod: .seconds(3600))
        #expect(try await client.readLine() == nil)
        server.listener.removeSocketFile()
        try? FileManager.default.removeItem(atPath: server.folder)
    }
}
