import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The same closed loop as `SocketLoad`, speaking redis's protocol: N connections on one
/// thread, each with one `GET key` in flight, the next sent as soon as the reply is read.
///
/// `redis-benchmark` drives redis with a generator slower than redis itself (redis sits at
/// 70–80 % of its core while the generator's is full), and its latency figures are those of a
/// server that is never the bottleneck. This loop is the one that measures the daemon (its
/// generator uses half a core), so redis's figures from it are measured under the same load
/// model — 16 connections, one request each, a server saturated by the same client.
struct RedisLoad {
    let path: String
    let connections: Int
    let key: String

    /// What one connection is in the middle of reading: a bulk string reply `$N\r\n…\r\n`.
    private struct Reader {
        var header: [UInt8] = []
        /// Bytes of the body (and its `\r\n`) still to come; nil while reading the header.
        var remaining: Int?
        var sentAt: UInt64 = 0
        var replyBytes = 0
    }

    func run(warmup: Double, duration: Double, serverPID: Int32?) throws -> SocketLoad.Result {
        var descriptors: [CInt] = []
        defer { descriptors.forEach { close($0) } }
        for _ in 0..<connections {
            let fd = try SocketLoad.connect(path)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            descriptors.append(fd)
        }
        let request = Array("*2\r\n$3\r\nGET\r\n$\(key.utf8.count)\r\n\(key)\r\n".utf8)
        var readers = [Reader](repeating: Reader(), count: connections)
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let start = SocketLoad.now()
        let measureFrom = start + UInt64(warmup * 1e9)
        let end = measureFrom + UInt64(duration * 1e9)
        var latencies: [Double] = []
        latencies.reserveCapacity(Int(duration * 200_000))
        var errors = 0
        var bytesReceived = 0
        var measuring = false
        var measureStart: UInt64 = 0
        var cpuAtStart = 0.0
        var serverCPUAtStart: Double?
        func send(_ connection: Int) throws {
            readers[connection].sentAt = SocketLoad.now()
            let sent = request.withUnsafeBytes { write(descriptors[connection], $0.baseAddress, $0.count) }
            // A 27-byte request into an empty socket buffer: all of it goes, or something is wrong.
            guard sent == request.count else { throw SocketLoad.Failure(description: "write: \(String(cString: strerror(errno)))") }
        }
        for connection in 0..<connections { try send(connection) }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        loop: while true {
            let ready = poll(&polled, nfds_t(polled.count), 100)
            if ready < 0 {
                if errno == EINTR { continue }
                throw SocketLoad.Failure(description: "poll: \(String(cString: strerror(errno)))")
            }
            let now = SocketLoad.now()
            if !measuring, now >= measureFrom {
                measuring = true
                measureStart = now
                cpuAtStart = SocketLoad.cpuSeconds()
                serverCPUAtStart = serverPID.flatMap(SocketLoad.cpuSeconds(pid:))
            }
            if now >= end { break loop }
            for connection in polled.indices where polled[connection].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(descriptors[connection], $0.baseAddress, $0.count) }
                if count == 0 { throw SocketLoad.Failure(description: "redis closed a connection") }
                if count < 0 {
                    if errno == EAGAIN || errno == EINTR { continue }
                    throw SocketLoad.Failure(description: "read: \(String(cString: strerror(errno)))")
                }
                if measuring { bytesReceived += count }
                var offset = 0
                while offset < count {
                    if let remaining = readers[connection].remaining {
                        let take = min(remaining, count - offset)
                        offset += take
                        readers[connection].remaining = remaining - take
                        guard remaining - take == 0 else { continue }
                        readers[connection].remaining = nil
                        if measuring {
                            latencies.append(Double(SocketLoad.now() - readers[connection].sentAt) / 1000)
                            if readers[connection].replyBytes <= 0 { errors += 1 }
                        }
                        try send(connection)
                        continue
                    }
                    // The header: `$` then the length, up to `\r\n`.
                    let byte = buffer[offset]
                    offset += 1
                    readers[connection].header.append(byte)
                    guard byte == 0x0A else { continue }
                    let header = readers[connection].header
                    readers[connection].header.removeAll(keepingCapacity: true)
                    guard header.first == UInt8(ascii: "$"),
                          let length = Int(String(decoding: header.dropFirst().dropLast(2), as: UTF8.self)) else {
                        throw SocketLoad.Failure(description: "unexpected reply: \(String(decoding: header, as: UTF8.self))")
                    }
                    readers[connection].replyBytes = length
                    readers[connection].remaining = max(0, length) + (length >= 0 ? 2 : 0)
                    if length < 0 {  // a nil reply: the key is missing
                        readers[connection].remaining = nil
                        if measuring { errors += 1; latencies.append(Double(SocketLoad.now() - readers[connection].sentAt) / 1000) }
                        try send(connection)
                    }
                }
            }
        }
        let seconds = Double(SocketLoad.now() - measureStart) / 1e9
        let cpu = SocketLoad.cpuSeconds() - cpuAtStart
        let serverCPU = serverPID.flatMap(SocketLoad.cpuSeconds(pid:)).map { $0 - (serverCPUAtStart ?? $0) }
        latencies.sort()
        return SocketLoad.Result(requests: latencies.count, errors: errors, seconds: seconds, bytesReceived: bytesReceived,
                                 latenciesMicroseconds: latencies, generatorCPUSeconds: cpu, daemonCPUSeconds: serverCPU)
    }
}
