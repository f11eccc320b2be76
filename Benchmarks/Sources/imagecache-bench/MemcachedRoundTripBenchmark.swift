import ArgumentParser
import Foundation
import ImageCacheConfig
import ImageCacheKit
import ImageCacheServer
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The measurement behind choosing a SwiftNIO meta-protocol client over libmemcached
/// (docs/benchmarks.md, "Fleet"): the daemon's own shared-tier lookup (`MemcachedSharedStore`,
/// the memcached meta client of a daemon built from a `[shared]` configuration) beside a bare
/// `mg` round trip over a plain blocking socket, for a value of the same size, on one real
/// memcached, one request at a time.
struct MemcachedRoundTripBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memcached-rtt",
        abstract: "p50/p99 of sequential memcached reads: the daemon's tier client vs a bare blocking socket."
    )

    @Option(help: "Measured reads per side.")
    var rounds = 5000
    @Option(help: "Reads per side before measuring.")
    var warmup = 200
    @Option(help: "Bytes of the value read.")
    var bytes = 20_000
    @Option(help: "Folder for the daemon's (unused) socket and cache.")
    var folder = "/tmp"

    func run() async throws {
        let node = MemcachedNode(port: try MemcachedNode.freePort())
        try await node.start()
        defer { node.kill() }
        let home = folder + "/memcached-rtt-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: home) }
        let configuration = try CacheConfiguration.parse(text: """
            [daemon]
            socket = \(home)/d.sock
            state_dir = \(home)/state
            [cache]
            cache_dir = \(home)/cache
            [shared]
            servers = \(node.address)
            timeout = 1s
            """, path: home + "/cache.conf", environment: [:])
        var logger = Logger(label: "imagecache-bench-memcached-rtt")
        logger.logLevel = .warning
        // The daemon's parts are built, never started: only its tier client is used.
        let daemon = try ImageCacheDaemon(configuration: configuration, logger: logger)
        let shared = daemon.services.shared
        let value = [UInt8](repeating: 0x5a, count: bytes)
        guard await shared.store("rtt", value, ttl: .seconds(600)) else {
            throw ValidationError("memcached on \(node.address) did not store the value")
        }
        var ours: [Duration] = []
        ours.reserveCapacity(rounds)
        for round in 0..<(warmup + rounds) {
            let start = ContinuousClock.now
            let found = await shared.lookup("rtt", claim: nil)
            let took = ContinuousClock.now - start
            guard case .hit(let read) = found, read.count == value.count else {
                throw ValidationError("read \(round) of the tier client missed: \(found)")
            }
            if round >= warmup { ours.append(took) }
        }
        await shared.shutdown()
        daemon.services.shutdown()
        let bare = try Self.bare(port: node.port, size: bytes, warmup: warmup, rounds: rounds)
        print(String(format: "memcached get of %d B, %d reads: tier client p50 %.0f µs p99 %.0f µs; bare socket mg p50 %.0f µs p99 %.0f µs; ratio p50 %.2f",
                     bytes, rounds, Self.micros(ours, 0.5), Self.micros(ours, 0.99),
                     Self.micros(bare, 0.5), Self.micros(bare, 0.99), Self.micros(ours, 0.5) / Self.micros(bare, 0.5)))
    }

    /// The `q` quantile of `values`, in microseconds.
    static func micros(_ values: [Duration], _ q: Double) -> Double {
        let sorted = values.sorted()
        let d = sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * q))]
        return Double(d.components.attoseconds) / 1e12 + Double(d.components.seconds) * 1e6
    }

    /// The floor: `ms` of a value of `size` bytes, then `mg KEY v` over one blocking TCP
    /// socket, each read to the end of the value.
    static func bare(port: Int, size: Int, warmup: Int, rounds: Int) throws -> [Duration] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        func send(_ bytes: [UInt8]) throws {
            var sent = 0
            while sent < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, 0) }
                guard n > 0 else { throw POSIXError(.EIO) }
                sent += n
            }
        }
        var buffer = [UInt8](repeating: 0, count: size + 64)
        func receive(_ count: Int) throws {
            var got = 0
            while got < count {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, count - got, 0) }
                guard n > 0 else { throw POSIXError(.EIO) }
                got += n
            }
        }
        try send(Array("ms bare-rtt \(size)\r\n".utf8) + [UInt8](repeating: 0x5a, count: size) + Array("\r\n".utf8))
        try receive("HD\r\n".utf8.count)
        let request = Array("mg bare-rtt v\r\n".utf8)
        let expected = "VA \(size)\r\n".utf8.count + size + 2
        var times: [Duration] = []
        times.reserveCapacity(rounds)
        for round in 0..<(warmup + rounds) {
            let start = ContinuousClock.now
            try send(request)
            try receive(expected)
            if round >= warmup { times.append(ContinuousClock.now - start) }
        }
        return times
    }
}
