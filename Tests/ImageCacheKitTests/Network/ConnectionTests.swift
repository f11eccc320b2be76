import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// What the engine does with connections: reuse on HTTP/1.1, one multiplexed connection on
/// HTTP/2 (a real nginx over TLS), and what a cancel costs on each.
@Suite("Network: connections, HTTP/2 and what a cancel costs", .timeLimit(.minutes(3)))
struct NetworkConnectionTests {
    /// An engine that trusts the run's self-signed certificate and may reach 127.0.0.1 over https.
    private static func tlsEngine(_ nginx: LoopbackTLSNginx) -> TransferEngine {
        NetworkFixture.engine { network in
            network.allowHTTP = false
            network.caBundle = nginx.certificate
            network.maxConnections = 16
            network.maxConnectionsPerHost = 16
        }
    }

    private static func withNginx<T: Sendable>(files: [String: [UInt8]],
                                               _ body: (LoopbackTLSNginx) async throws -> T) async throws -> (T, [LoopbackTLSNginx.Entry]) {
        // Starting (openssl, nginx) and stopping (waitpid) block: off the concurrency pool.
        let nginx = try await offCooperativePool { try LoopbackTLSNginx.start(files: files) }
        do {
            let result = try await body(nginx)
            return (result, try await offCooperativePool { nginx.stop() })
        } catch {
            let log = nginx.errorLog
            _ = try? await offCooperativePool { nginx.stop() }
            Issue.record("nginx said: \(log)")
            throw error
        }
    }

    @Test("sequential HTTP/1.1 transfers to one host reuse one connection")
    func http1Reuse() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/p.jpg", body: photo)
            for _ in 0..<3 {
                let result = try await withTimeout(seconds: 30) {
                    try await engine.start(TransferRequest(url: server.url("/p.jpg"))).result()
                }
                #expect(result.httpVersion == "1.1")
            }
            #expect(engine.stats.requests == 3)
            #expect(engine.stats.connectionsOpened == 1)
        }
    }

    @Test("on HTTP/1.1 a transfer cancelled mid-body costs its connection")
    func http1CancelCostsConnection() async throws {
        let body = [UInt8](repeating: 0x5A, count: 4 << 20)
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/slow.bin", body: body, faults: [.stall(afterBytes: 64 << 10)])
            server.serve("/p.jpg", body: photo)
            _ = try await withTimeout(seconds: 30) { try await engine.start(TransferRequest(url: server.url("/p.jpg"))).result() }
            let log = EventLog()
            let slow = engine.start(TransferRequest(url: server.url("/slow.bin")), events: log.handler)
            _ = try await withTimeout(seconds: 30) { await log.waitFor { if case .progress(let r, _) = $0 { r > 0 } else { false } } }
            slow.cancel()
            let error = await rpcError { _ = try await withTimeout(seconds: 30) { try await slow.result() } }
            #expect(error?.kind == .cancelled)
            _ = try await withTimeout(seconds: 30) { try await engine.start(TransferRequest(url: server.url("/p.jpg"))).result() }
            #expect(engine.stats.connectionsOpened == 2)
        }
    }

    @Test("concurrent transfers to an HTTP/2 server share one connection")
    func http2Multiplexes() async throws {
        let photo = try NetworkFixture.photo()
        let paths = (0..<20).map { "/img/\($0).jpg" }
        let (stats, log) = try await Self.withNginx(files: Dictionary(uniqueKeysWithValues: paths.map { ($0, photo) })) { nginx in
            let engine = Self.tlsEngine(nginx)
            defer { engine.shutdown() }
            let handles = paths.map { engine.start(TransferRequest(url: nginx.url($0))) }
            for handle in handles {
                let result = try await withTimeout(seconds: 60) { try await handle.result() }
                #expect(result.status == 200)
                #expect(result.httpVersion == "2")
                #expect(result.body == .memory(photo))
            }
            return engine.stats
        }
        #expect(stats.requests == 20)
        #expect(stats.connectionsOpened == 1)
        #expect(log.count == 20)
        #expect(log.allSatisfy { $0.protocolName == "HTTP/2.0" && $0.status == 200 })
        #expect(Set(log.map(\.connection)).count == 1, "nginx saw connections \(Set(log.map(\.connection)))")
    }

    @Test("cancelling an HTTP/2 transfer resets its stream and keeps the connection")
    func http2CancelKeepsConnection() async throws {
        let photo = try NetworkFixture.photo()
        let big = [UInt8](repeating: 0x5A, count: 4 << 20)
        let (stats, log) = try await Self.withNginx(files: ["/a.jpg": photo, "/b.jpg": photo, "/slow/big.bin": big]) { nginx in
            let engine = Self.tlsEngine(nginx)
            defer { engine.shutdown() }
            let first = try await withTimeout(seconds: 60) { try await engine.start(TransferRequest(url: nginx.url("/a.jpg"))).result() }
            #expect(first.httpVersion == "2")
            let events = EventLog()
            let slow = engine.start(TransferRequest(url: nginx.url("/slow/big.bin")), events: events.handler)
            _ = try await withTimeout(seconds: 60) { await events.waitFor { if case .progress(let r, _) = $0 { r > 0 } else { false } } }
            slow.cancel()
            let error = await rpcError { _ = try await withTimeout(seconds: 60) { try await slow.result() } }
            #expect(error?.kind == .cancelled)
            let after = try await withTimeout(seconds: 60) { try await engine.start(TransferRequest(url: nginx.url("/b.jpg"))).result() }
            #expect(after.httpVersion == "2")
            #expect(after.body == .memory(photo))
            return engine.stats
        }
        #expect(stats.connectionsOpened == 1)
        #expect(stats.bytesDiscarded > 0)
        let slowEntry = log.first { $0.path == "/slow/big.bin" }
        #expect(slowEntry.map { $0.bytesSent < big.count } == true, "nginx sent the whole cancelled body: \(log)")
        #expect(Set(log.map(\.connection)).count == 1, "nginx saw connections \(log.map(\.connection))")
    }
}
