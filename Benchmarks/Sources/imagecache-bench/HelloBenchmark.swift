import ArgumentParser
import Foundation
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
/// connection (closed loop, like wrk), from a single polling thread so the generator stays far
/// cheaper than the server. Benchmarks/scripts/hello.sh runs both beside nginx + wrk.
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
            let result = try HelloLoad(path: socket, connections: connections).run(warmup: warmup, duration: duration, daemonPID: daemonPid)
            print(result.report)
        }
    }
}

/// A closed-loop generator on one thread: N non-blocking connections in one `poll` set
/// (Glibc's module has no epoll; for 16 descriptors poll costs the same).
struct HelloLoad {
    let path: String
    let connections: Int

    struct Result {
        var requests: Int
        var errors: Int
        var seconds: Double
        var latenciesMicroseconds: [Double]
        var generatorCPUSeconds: Double
        var daemonCPUSeconds: Double?

        func percentile(_ p: Double) -> Double {
            guard !latenciesMicroseconds.isEmpty else { return .nan }
            let index = min(latenciesMicroseconds.count - 1, Int((Double(latenciesMicroseconds.count) * p).rounded(.up)) - 1)
            return latenciesMicroseconds[max(0, index)]
        }

        var report: String {
            let rate = Double(requests) / seconds
            var lines = [
                "requests: \(requests) in \(String(format: "%.2f", seconds)) s, errors: \(errors)",
                String(format: "rate: %.0f req/s", rate),
                String(format: "latency: p50 %.0f µs, p99 %.0f µs, p99.9 %.0f µs, max %.0f µs",
                       percentile(0.50), percentile(0.99), percentile(0.999), latenciesMicroseconds.last ?? .nan),
                String(format: "generator CPU: %.2f s (%.0f%% of one core)", generatorCPUSeconds, 100 * generatorCPUSeconds / seconds),
            ]
            if let daemonCPUSeconds {
                lines.append(String(format: "daemon CPU: %.2f s (%.0f%% of one core)", daemonCPUSeconds, 100 * daemonCPUSeconds / seconds))
            }
            return lines.joined(separator: "\n")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private static let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#.utf8) + [0x0A]
    private static let marker = Array(#""protocol":1"#.utf8)

    /// Whether `marker` occurs in `answer`: a plain byte scan over raw memory, so the check
    /// costs the generator next to nothing.
    private static func contains(_ answer: ArraySlice<UInt8>, _ marker: [UInt8]) -> Bool {
        answer.withUnsafeBytes { haystack in
            marker.withUnsafeBytes { needle in
                guard needle.count <= haystack.count else { return false }
                let first = needle[0]
                var start = 0
                while start <= haystack.count - needle.count {
                    if haystack[start] == first,
                       memcmp(haystack.baseAddress! + start, needle.baseAddress!, needle.count) == 0 {
                        return true
                    }
                    start += 1
                }
                return false
            }
        }
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// utime + stime of another process, from /proc/PID/stat.
    private static func cpuSeconds(pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3, utime 14, stime 15 (1-based).
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private func connect() throws -> CInt {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw Failure(description: "connect \(path): \(String(cString: strerror(errno)))") }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    private static func send(_ fd: CInt) throws {
        let sent = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        // 43 bytes into an empty socket buffer (one request in flight) always go at once.
        guard sent == request.count else { throw Failure(description: "short write: \(sent)") }
    }

    func run(warmup: Double, duration: Double, daemonPID: Int32?) throws -> Result {
        var descriptors: [CInt] = []
        defer { descriptors.forEach { close($0) } }
        var sentAt = [UInt64](repeating: 0, count: connections)
        var pending = [[UInt8]](repeating: [], count: connections)
        for _ in 0..<connections {
            let fd = try connect()
            descriptors.append(fd)
        }
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let start = Self.now()
        let measureFrom = start + UInt64(warmup * 1e9)
        let end = measureFrom + UInt64(duration * 1e9)
        var latencies: [Double] = []
        latencies.reserveCapacity(Int(duration * 200_000))
        var requests = 0
        var errors = 0
        var cpuAtStart: Double?
        var daemonCPUAtStart: Double?
        for index in 0..<connections {
            sentAt[index] = Self.now()
            try Self.send(descriptors[index])
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var measuring = false
        var measureStart: UInt64 = 0
        loop: while true {
            let ready = poll(&polled, nfds_t(polled.count), 100)
            if ready < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "poll: \(String(cString: strerror(errno)))")
            }
            var now = Self.now()
            if !measuring, now >= measureFrom {
                measuring = true
                measureStart = now
                cpuAtStart = Self.cpuSeconds()
                daemonCPUAtStart = daemonPID.flatMap(Self.cpuSeconds(pid:))
            }
            if now >= end { break loop }
            for index in polled.indices where polled[index].revents != 0 {
                let fd = descriptors[index]
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count == 0 { throw Failure(description: "the daemon closed a connection") }
                if count < 0 {
                    if errno == EAGAIN || errno == EINTR { continue }
                    throw Failure(description: "read: \(String(cString: strerror(errno)))")
                }
                // One request in flight per connection: a complete line is its answer. Usually
                // it arrives in one read, and is checked in place without copying.
                let answer: ArraySlice<UInt8>
                if pending[index].isEmpty, buffer[count - 1] == 0x0A {
                    answer = buffer[0..<(count - 1)]
                } else {
                    pending[index] += buffer[0..<count]
                    guard let newline = pending[index].lastIndex(of: 0x0A) else { continue }
                    answer = pending[index][..<newline]
                }
                now = Self.now()
                if !Self.contains(answer, Self.marker) {
                    if errors == 0 {
                        FileHandle.standardError.write(Data("first unexpected answer: ".utf8) + Data(answer) + Data("\n".utf8))
                    }
                    errors += 1
                }
                pending[index].removeAll(keepingCapacity: true)
                if measuring {
                    requests += 1
                    latencies.append(Double(now - sentAt[index]) / 1000)
                }
                sentAt[index] = now
                try Self.send(fd)
            }
        }
        let seconds = Double(Self.now() - measureStart) / 1e9
        let cpu = Self.cpuSeconds() - (cpuAtStart ?? Self.cpuSeconds())
        let daemonCPU = daemonPID.flatMap(Self.cpuSeconds(pid:)).map { $0 - (daemonCPUAtStart ?? $0) }
        latencies.sort()
        return Result(requests: requests, errors: errors, seconds: seconds, latenciesMicroseconds: latencies,
                      generatorCPUSeconds: cpu, daemonCPUSeconds: daemonCPU)
    }
}
