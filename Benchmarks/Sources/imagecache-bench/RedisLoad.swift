import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The same closed loop as `SocketLoad` (`SocketLoad.drive`), speaking redis's protocol: N
/// connections on one thread, each with one `GET key` in flight, the next sent as soon as the
/// reply is read.
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
    }

    func run(warmup: Double, duration: Double, serverPID: Int32?) throws -> SocketLoad.Result {
        let request = Array("*2\r\n$3\r\nGET\r\n$\(key.utf8.count)\r\n\(key)\r\n".utf8)
        var readers = [Reader](repeating: Reader(), count: connections)
        var latencies: [Double] = []
        latencies.reserveCapacity(Int(duration * 200_000))
        var errors = 0
        func send(_ connection: Int, _ fd: CInt) throws {
            readers[connection].sentAt = SocketLoad.now()
            let sent = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            // A short request into an empty socket buffer: all of it goes, or something is wrong.
            guard sent == request.count else { throw SocketLoad.Failure(description: "write: \(String(cString: strerror(errno)))") }
        }
        func answered(_ connection: Int, _ fd: CInt, measuring: Bool, missing: Bool) throws {
            if measuring {
                latencies.append(Double(SocketLoad.now() - readers[connection].sentAt) / 1000)
                if missing { errors += 1 }
            }
            try send(connection, fd)
        }
        let window = try SocketLoad.drive(path: path, connections: connections, warmup: warmup, duration: duration,
                                          serverPID: serverPID, begin: send, consume: { connection, fd, chunk, measuring in
            var offset = 0
            while offset < chunk.count {
                if let remaining = readers[connection].remaining {
                    let take = min(remaining, chunk.count - offset)
                    offset += take
                    readers[connection].remaining = remaining - take
                    if remaining - take == 0 {
                        readers[connection].remaining = nil
                        try answered(connection, fd, measuring: measuring, missing: false)
                    }
                    continue
                }
                // The header: `$`, the length, `\r\n`.
                let byte = chunk[offset]
                offset += 1
                readers[connection].header.append(byte)
                guard byte == 0x0A else { continue }
                let header = readers[connection].header
                readers[connection].header.removeAll(keepingCapacity: true)
                guard header.first == UInt8(ascii: "$"),
                      let length = Int(String(decoding: header.dropFirst().dropLast(2), as: UTF8.self)) else {
                    throw SocketLoad.Failure(description: "unexpected reply: \(String(decoding: header, as: UTF8.self))")
                }
                if length < 0 {
                    try answered(connection, fd, measuring: measuring, missing: true)  // a nil reply: no such key
                } else {
                    readers[connection].remaining = length + 2
                }
            }
        })
        latencies.sort()
        return SocketLoad.Result(requests: latencies.count, errors: errors, seconds: window.seconds,
                                 bytesReceived: window.bytesReceived, latenciesMicroseconds: latencies,
                                 generatorCPUSeconds: window.generatorCPU, daemonCPUSeconds: window.serverCPU)
    }
}
