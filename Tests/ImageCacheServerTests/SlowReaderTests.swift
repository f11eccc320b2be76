import Foundation
import ImageCacheServer
import NIOCore
import Testing
import TestSupport

/// A client that stops reading cannot make the daemon's memory grow, and cannot slow down
/// anyone else (docs/protocol.md, "Sessions"). Checked on the server's own counters, never on timing.
@Suite("Slow readers", .timeLimit(.minutes(3)))
struct SlowReaderTests {
    @Test("past the first bound progress notifications are dropped, the buffer stays bounded, and the response still arrives")
    func progressDropped() async throws {
        let methods = TestMethods()
        let limits = ServerLimits(outboundSoftLimit: 64 << 10, outboundHardLimit: 8 << 20)
        try await TestServer.with(limits: limits, extend: { methods.register(in: &$0) }) { server in
            let stalled = try await server.connect(reading: false)
            // 4 MiB of progress: far more than the kernel buffers between us.
            try await stalled.send(#"{"jsonrpc":"2.0","id":"flood","method":"test.flood","params":{"count":4096,"size":1024,"method":"test.progress"}}"#)
            try await methods.wait(for: "flooded")

            // Another session is served normally meanwhile.
            let other = try await server.connect()
            for id in 1...20 {
                let hello = try await other.call(#"{"jsonrpc":"2.0","id":\#(id),"method":"hello"}"#)
                #expect(hello["id"] as? Int == id)
                #expect(hello.resultObject?["protocol"] as? Int == 1)
            }

            // Once the client reads again, the response is there: responses are never dropped.
            try await stalled.channel.setOption(ChannelOptions.autoRead, value: true).get()
            stalled.channel.read()
            var sawResponse = false
            while let line = try await stalled.readLine() {
                let message = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
                if message?["id"] as? String == "flood" {
                    #expect(message?["result"] as? Int == 4096)
                    sawResponse = true
                    break
                }
            }
            #expect(sawResponse)
            // The response went through the slow-reader policy after every notification before
            // it, so the counters now tell the whole story.
            let metrics = server.server.metrics
            #expect(metrics.droppedProgressNotifications > 0)
            #expect(metrics.slowReaderDisconnects == 0)
            // Bounded by the soft limit plus one message (the response, never dropped).
            #expect(metrics.peakQueuedOutboundBytesPerConnection <= limits.outboundSoftLimit + 2048)
            await stalled.close()
            await other.close()
        }
    }

    @Test("past the second bound the connection is closed, and no essential notification is dropped before that")
    func disconnectedPastHardBound() async throws {
        let methods = TestMethods()
        let limits = ServerLimits(outboundSoftLimit: 16 << 10, outboundHardLimit: 256 << 10)
        try await TestServer.with(limits: limits, extend: { methods.register(in: &$0) }) { server in
            let other = try await server.connect()
            // A round trip proves the server has this session before the count is awaited below.
            _ = try await other.call(#"{"jsonrpc":"2.0","id":0,"method":"hello"}"#)
            let stalled = try await server.connect(reading: false)
            try await stalled.send(#"{"jsonrpc":"2.0","id":1,"method":"test.flood","params":{"count":4096,"size":1024,"method":"test.finished"}}"#)
            try await methods.wait(for: "flooded")
            await server.server.waitUntilSessionCount(atMost: 1)

            let metrics = server.server.metrics
            #expect(metrics.slowReaderDisconnects == 1)
            #expect(metrics.droppedProgressNotifications == 0)
            #expect(metrics.peakQueuedOutboundBytesPerConnection <= limits.outboundHardLimit)
            let hello = try await other.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
            #expect(hello.resultObject != nil)
            await stalled.close()
            await other.close()
        }
    }

    @Test("a client that sends requests but never reads stops being read, and its buffer stays bounded")
    func requestsWithoutReading() async throws {
        let limits = ServerLimits(outboundSoftLimit: 32 << 10, outboundHardLimit: 8 << 20)
        try await TestServer.with(limits: limits) { server in
            let stalled = try await server.connect(reading: false)
            let line = Array(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#.utf8) + [UInt8(ascii: "\n")]
            var batch: [UInt8] = []
            for _ in 0..<20_000 { batch += line }
            // 20 000 requests queued at once (not awaited: once the server stops reading, this
            // write can never complete, which is the point).
            stalled.channel.writeAndFlush(ByteBuffer(bytes: batch), promise: nil)
            try await withTimeout(seconds: 60) { try await server.server.metrics.readPauseCount.wait { $0 > 0 } }

            // The other session is answered while the stalled one is paused.
            let other = try await server.connect()
            for id in 1...20 {
                let stats = try await other.call(#"{"jsonrpc":"2.0","id":\#(id),"method":"stats"}"#)
                #expect(stats["id"] as? Int == id)
                #expect(stats.resultObject?["sessions"] as? Int == 2)
            }
            let metrics = server.server.metrics
            // Paused for good: the answers have nowhere to go, so the server has not read (or
            // answered) all 20 000, and what it holds stays under the hard bound.
            #expect(metrics.requestsAnswered < 20_000)
            #expect(metrics.peakQueuedOutboundBytesPerConnection >= limits.outboundSoftLimit)
            #expect(metrics.peakQueuedOutboundBytesPerConnection < limits.outboundHardLimit)
            #expect(metrics.slowReaderDisconnects == 0)
            await stalled.close()
            await other.close()
        }
    }
}

/// Hundreds of clients that connect and vanish, mid-line or mid-answer, leave nothing behind.
@Suite("Connection churn", .timeLimit(.minutes(3)))
struct ConnectionChurnTests {
    @Test("hundreds of connections opened and dropped abruptly leave the server serving and no session behind")
    func churn() async throws {
        try await TestServer.with { server in
            let survivor = try await server.connect()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for round in 0..<300 {
                    group.addTask {
                        let client = try await server.connect()
                        switch round % 3 {
                        case 0: break
                        case 1: try await client.send(bytes: Array(#"{"jsonrpc":"2.0","id":1,"meth"#.utf8))
                        default: try await client.send(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
                        }
                        await client.close()
                    }
                    if round % 50 == 49 { try await group.waitForAll() }
                }
                try await group.waitForAll()
            }
            // The server has accepted all 301, then seen 300 of them go.
            try await withTimeout(seconds: 60) { try await server.server.metrics.acceptedCount.wait { $0 >= 301 } }
            await server.server.waitUntilSessionCount(atMost: 1)
            #expect(server.server.sessionCount == 1)
            let hello = try await survivor.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
            #expect(hello.resultObject != nil)
            await survivor.close()
        }
    }
}
