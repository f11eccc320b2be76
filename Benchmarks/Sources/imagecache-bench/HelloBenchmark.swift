import ArgumentParser
import Foundation
import ImageCacheConfig
import ImageCacheKit
import ImageCacheServer
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `hello` round trips: the cost of the daemon's framing, validation, dispatch and encoding
/// with no engine work behind it — the floor under every later method.
///
/// `serve` runs the daemon (the `ImageCacheDaemon` library, assembled as `imagecached`'s main
/// does) in this process; `load` drives it from N connections, one request in flight per
/// connection (closed loop, like wrk), with `SocketLoad`'s single polling thread so the
/// generator stays far cheaper than the server. Benchmarks/scripts/hello.sh runs both beside nginx + wrk.
struct HelloBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hello",
        abstract: "hello round trips over the Unix socket: requests/s, p50/p99 (see Benchmarks/scripts/hello.sh).",
        subcommands: [Serve.self, Load.self]
    )

    /// The daemon under test, as its own process.
    ///
    /// A synchronous command that blocks its thread until the daemon stops: the runner's
    /// top-level `await BenchCommand.main()` resolves to the synchronous entry point, which
    /// does not run asynchronous subcommands.
    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the daemon on SOCKET until SIGTERM.")

        @Option(help: "The socket path to serve on.")
        var socket: String

        func run() throws {
            var configuration = CacheConfiguration()
            configuration.daemon.socket = socket
            // Its own cache folder beside the socket: never the user's cache, never locked by another run.
            configuration.cache.cacheDir = (socket as NSString).deletingLastPathComponent + "/hello-bench-cache"
            var logger = Logger(label: "imagecached-bench")
            logger.logLevel = .warning
            let daemon = try ImageCacheDaemon(configuration: configuration, logger: logger,
                                          options: .init(environment: ProcessInfo.processInfo.environment))
            let done = DispatchSemaphore(value: 0)
            Task {
                do {
                    try await daemon.run()
                } catch {
                    FileHandle.standardError.write(Data("imagecache-bench hello serve: \(error)\n".utf8))
                    Glibc.exit(1)
                }
                done.signal()
            }
            done.wait()
        }
    }

    /// The load generator.
    struct Load: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send hello round trips to SOCKET and report rate and latency.")

        @Option(help: "The daemon's socket path.")
        var socket: String
        @Option(help: "Concurrent connections, one request in flight each.")
        var connections = 16
        @Option(help: "Measured seconds.")
        var duration = 10.0
        @Option(help: "Seconds of warm-up before measuring.")
        var warmup = 1.0
        @Option(help: "The daemon's pid, to report its CPU time beside the generator's.")
        var daemonPid: Int32?

        func run() throws {
            let hello = Array(#""method":"hello"}"#.utf8)
            let load = SocketLoad(path: socket, connections: connections, depth: 1, request: { _, _ in hello },
                                  marker: Array(#""protocol":1"#.utf8))
            let result = try load.run(warmup: warmup, duration: duration, daemonPID: daemonPid)
            print(result.report)
        }
    }
}
