import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheKit
import ProviderSimulator

/// Memory-hit `thumbnail.show` round trips: what a grid client pays for a thumbnail the daemon
/// already holds, as a path or with the bytes inline. Benchmarks/scripts/show.sh runs it beside
/// nginx + wrk serving the same file and redis GET of the same bytes over a Unix socket.
struct ShowBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Memory-hit thumbnail.show over the socket: requests/s, p50/p99 (see Benchmarks/scripts/show.sh).",
        subcommands: [Prepare.self, Prime.self, Load.self, Redis.self, NIOFloor.self]
    )

    /// Writes the image the daemon will fetch: a real JPEG of about `bytes` bytes.
    struct Prepare: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a JPEG of about BYTES bytes; print its width.")

        @Option(help: "Where to write it.")
        var out: String
        @Option(help: "Approximate size in bytes.")
        var bytes = 30 * 1024

        func run() throws {
            let image = SyntheticImages.jpeg(approximateBytes: bytes, seed: 8)
            try Data(image).write(to: URL(fileURLWithPath: out))
            guard case .header(let header) = try ImageHeaderProbe.probe(image) else {
                throw ValidationError("the synthetic image has no complete header")
            }
            print(header.width)
        }
    }

    /// One `thumbnail.show` so that the image is in the daemon's memory tier; prints where it
    /// is and where it came from, so the script can give the peers the same bytes.
    struct Prime: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show URL once; print path, bytes and source (tab-separated).")

        @Option(help: "The daemon's socket path.")
        var socket: String
        @Option(help: "The image URL.")
        var url: String
        @Option(help: "The size to ask for.")
        var size: Int

        func run() async throws {
            let connection = try await ImageCacheConnection.connect(to: socket)
            let first = try await connection.showThumbnail(ThumbnailShowParams(slot: 0, image: .url(url), size: size))
            let second = try await connection.showThumbnail(ThumbnailShowParams(slot: 0, image: .url(url), size: size))
            await connection.close()
            print("\(second.path)\t\(second.bytes)\t\(first.source.rawValue)\t\(second.source.rawValue)")
        }
    }

    /// The load generator: `SocketLoad` with `thumbnail.show` requests, each answer checked to
    /// be a memory hit.
    struct Load: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send memory-hit thumbnail.show round trips and report rate and latency.")

        @Option(help: "The daemon's socket path.")
        var socket: String
        @Option(help: "The image URL (already shown once, so in memory).")
        var url: String
        @Option(help: "The size to ask for (as primed).")
        var size: Int
        @Flag(help: "Ask for the bytes inline (base64 in the answer).")
        var inline = false
        @Option(help: "Concurrent connections.")
        var connections = 16
        @Option(help: "Requests in flight per connection (1: wrk's closed loop; more: pipelined, each on its own slot).")
        var depth = 1
        @Option(help: "Measured seconds.")
        var duration = 10.0
        @Option(help: "Seconds of warm-up before measuring.")
        var warmup = 1.0
        @Option(help: "The daemon's pid, to report its CPU time beside the generator's.")
        var daemonPid: Int32?
        @Option(help: "Write every measured answer's time, connection and latency to this file.")
        var trace: String?

        func run() throws {
            // The URL goes into JSON: encode it as a JSON string.
            let urlJSON = String(decoding: try JSONEncoder().encode(url), as: UTF8.self)
            var load = SocketLoad(
                path: socket, connections: connections, depth: depth,
                request: { _, lane in
                    Array(#""method":"thumbnail.show","params":{"slot":\#(lane),"url":\#(urlJSON),"size":\#(size),"inline":\#(inline)}}"#.utf8)
                },
                marker: Array(#""source":"memory""#.utf8))
            load.tracePath = trace
            let result = try load.run(warmup: warmup, duration: duration, daemonPID: daemonPid)
            print(result.report)
        }
    }

    /// redis GET of the same bytes through the same closed loop as `Load` (`RedisLoad`).
    struct Redis: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "GET KEY from redis over its Unix socket in the same closed loop as `load`.")

        @Option(help: "redis's Unix socket path.")
        var socket: String
        @Option(help: "The key holding the thumbnail's bytes.")
        var key = "thumb"
        @Option(help: "Concurrent connections, one GET in flight on each.")
        var connections = 16
        @Option(help: "Measured seconds.")
        var duration = 10.0
        @Option(help: "Seconds of warm-up before measuring.")
        var warmup = 1.0
        @Option(help: "redis-server's pid, to report its CPU time beside the generator's.")
        var serverPid: Int32?

        func run() throws {
            let load = RedisLoad(path: socket, connections: connections, key: key)
            print(try load.run(warmup: warmup, duration: duration, serverPID: serverPid).report.replacingOccurrences(of: "daemon CPU", with: "server CPU"))
        }
    }
}
