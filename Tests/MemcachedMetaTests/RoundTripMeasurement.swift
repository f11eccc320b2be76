import Foundation
import NIOPosix
import Testing
import TestSupport
@testable import MemcachedMeta
#if canImport(Glibc)
import Glibc
#endif

/// The measurement behind choosing this client over libmemcached (docs/benchmarks.md, "Fleet"):
/// this client's `get` round trip beside memcached's bare `mg` round trip over a plain blocking
/// socket, for the same value, on one real memcached. Off by default (a timing is not a test on
/// a shared CI machine): `MEMCACHED_RTT=1 swift test --skip-build --filter RoundTripMeasurement`.
@Suite("memcached round trip: this client vs a bare socket",
       .enabled(if: ProcessInfo.processInfo.environment["MEMCACHED_RTT"] != nil))
struct RoundTripMeasurement {
    @Test("p50/p99 of 5000 sequential reads of a 20 KB value")
    func measure() async throws {
        let server = try await MemcachedServer.start()
        let value = [UInt8](repeating: 0x5a, count: 20_000)
        var configuration = MemcachedClient.Configuration()
        configuration.timeout = .seconds(1)
        let client = MemcachedClient(servers: [MemcachedServerAddress(host: "127.0.0.1", port: server.port)],
                                     configuration: configuration, group: MultiThreadedEventLoopGroup.singleton)
        #expect(await client.set("rtt", value, ttl: .seconds(600)) == .stored)
        let rounds = 5000
        var ours: [Duration] = []
        for _ in 0..<200 { _ = await client.get("rtt") }
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            let found = await client.get("rtt")
            ours.append(ContinuousClock.now - start)
            guard case .hit(let bytes) = found, bytes.count == value.count else { Issue.record("miss"); return }
        }
        let bare = try Self.bare(port: server.port, key: MetaKey.wire("rtt", prefix: ""), size: value.count, rounds: rounds)
        func p(_ values: [Duration], _ q: Double) -> Double {
            let sorted = values.sorted()
            let d = sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * q))]
            return Double(d.components.attoseconds) / 1e12 + Double(d.components.seconds) * 1e6
        }
        print(String(format: "memcached get of %d B: MemcachedClient p50 %.0f µs p99 %.0f µs; bare socket mg p50 %.0f µs p99 %.0f µs; ratio p50 %.2f",
                     value.count, p(ours, 0.5), p(ours, 0.99), p(bare, 0.5), p(bare, 0.99), p(ours, 0.5) / p(bare, 0.5)))
        await client.shutdown()
    }

    /// `mg KEY v` over one blocking TCP socket, read to the end of the value: the floor.
    static func bare(port: Int, key: String, size: Int, rounds: Int) throws -> [Duration] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let request = Array("mg \(key) v\r\n".utf8)
        let expected = "VA \(size)\r\n".utf8.count + size + 2
        var buffer = [UInt8](repeating: 0, count: expected + 64)
        var times: [Duration] = []
        for round in 0..<(rounds + 200) {
            let start = ContinuousClock.now
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            var got = 0
            while got < expected {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, expected - got, 0) }
                guard n > 0 else { throw POSIXError(.EIO) }
                got += n
            }
            if round >= 200 { times.append(ContinuousClock.now - start) }
        }
        return times
    }
}
