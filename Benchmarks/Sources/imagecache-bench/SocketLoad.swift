import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A closed-loop load generator for the daemon's NDJSON protocol, on one thread: N
/// non-blocking connections in one `poll` set (Glibc's module has no epoll; for 16
/// descriptors poll costs the same), each keeping `depth` requests in flight.
///
/// With `depth` 1 it is wrk's model (one request per connection, the next sent as soon as
/// the answer arrives); a larger depth pipelines requests on each connection the way
/// `redis-benchmark -P` does. Each in-flight request of a connection is a *lane*; every request
/// gets a fresh JSON-RPC id (`sequence × depth + lane`, as a real client never reuses an id),
/// so answers that come back out of order (the contract allows it) are still matched to the
/// lane they answer, and each lane's latency is measured from its own send. Only the head and
/// the tail of each answer are kept (the id leads the envelope; the marker is a result member,
/// and the encoder may put it before or after a large `data` member), so answers carrying tens
/// of kilobytes of inline data cost a `memchr`, not a copy.
struct SocketLoad {
    let path: String
    let connections: Int
    let depth: Int
    /// The members of a lane's request after its id, up to the newline: `(connection, lane) ->`
    /// `"method":"hello"}` for instance. The generator writes `{"jsonrpc":"2.0","id":N,` before it.
    let request: (Int, Int) -> [UInt8]
    /// Bytes every good answer contains within its first or last `headLimit` bytes; an answer
    /// without them counts as an error (and the first one is printed).
    let marker: [UInt8]

    /// When set, every measured answer is written there as a line `NANOSECONDS CONNECTION
    /// MICROSECONDS` (since the first measured answer; the connection's index; its latency),
    /// for `Benchmarks/scripts/trace_summary.py`.
    var tracePath: String? = nil

    /// How much of each end of an answer line is kept for the checks.
    static let headLimit = 512

    struct Result {
        var requests: Int
        var errors: Int
        var seconds: Double
        var bytesReceived: Int
        var latenciesMicroseconds: [Double]
        var generatorCPUSeconds: Double
        var daemonCPUSeconds: Double?

        var rate: Double { Double(requests) / seconds }

        /// The latency below which `p` of the answers arrived (nearest rank over every answer).
        func percentile(_ p: Double) -> Double {
            guard !latenciesMicroseconds.isEmpty else { return .nan }
            let index = min(latenciesMicroseconds.count - 1, Int((Double(latenciesMicroseconds.count) * p).rounded(.up)) - 1)
            return latenciesMicroseconds[max(0, index)]
        }

        var report: String {
            var lines = [
                "requests: \(requests) in \(String(format: "%.2f", seconds)) s, errors: \(errors)",
                String(format: "rate: %.0f req/s, %.1f MB/s received", rate, Double(bytesReceived) / seconds / 1e6),
                String(format: "latency: p50 %.0f µs, p99 %.0f µs, p99.9 %.0f µs, max %.0f µs",
                       percentile(0.50), percentile(0.99), percentile(0.999), latenciesMicroseconds.last ?? .nan),
                String(format: "spread: min %.0f, p10 %.0f, p25 %.0f, p75 %.0f, p90 %.0f, p95 %.0f µs; mean %.0f µs",
                       latenciesMicroseconds.first ?? .nan, percentile(0.10), percentile(0.25), percentile(0.75),
                       percentile(0.90), percentile(0.95), latenciesMicroseconds.reduce(0, +) / Double(max(1, latenciesMicroseconds.count))),
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

    /// What one connection is in the middle of reading.
    private struct Reader {
        /// The first `headLimit` bytes of the answer being read.
        var head: [UInt8] = []
        /// Its last `headLimit` bytes so far (once it is longer than the head).
        var tail: [UInt8] = []
        /// Its length so far.
        var length = 0
        /// When each lane's request was sent.
        var sentAt: [UInt64]
        /// Requests sent on this connection (the next id's sequence number).
        var sequence = 0
    }

    private static let idPrefix = Array(#""id":"#.utf8)

    /// Whether `needle` occurs in `haystack`: a plain byte scan over raw memory, so the check
    /// costs the generator next to nothing.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pin in
                guard pin.count <= hay.count, pin.count > 0 else { return pin.count == 0 }
                let first = pin[0]
                var start = 0
                while start <= hay.count - pin.count {
                    if hay[start] == first, memcmp(hay.baseAddress! + start, pin.baseAddress!, pin.count) == 0 {
                        return true
                    }
                    start += 1
                }
                return false
            }
        }
    }

    /// The integer id of an answer (`{"jsonrpc":"2.0","id":N,…`), or nil for a notification.
    static func answerID(_ head: [UInt8]) -> Int? {
        let limit = min(head.count, 48)
        var start = 0
        while start + idPrefix.count <= limit {
            if head[start] == 0x22, head[start..<start + idPrefix.count].elementsEqual(idPrefix) {
                var index = start + idPrefix.count
                var value = 0
                var digits = 0
                while index < head.count, head[index] >= 0x30, head[index] <= 0x39 {
                    value = value * 10 + Int(head[index] - 0x30)
                    index += 1
                    digits += 1
                }
                return digits > 0 ? value : nil
            }
            start += 1
        }
        return nil
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// utime + stime of another process, from /proc/PID/stat.
    static func cpuSeconds(pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3, utime 14, stime 15 (1-based).
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A blocking-mode connection to a Unix socket (made non-blocking by the caller when needed).
    static func connect(_ path: String) throws -> CInt {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect \(path): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    private static let envelope = Array(#"{"jsonrpc":"2.0","id":"#.utf8)

    /// Writes one request of `lane` with a fresh id into `line` (reused storage) and sends it.
    private func send(_ fd: CInt, lane: Int, reader: inout Reader, rest: [UInt8], line: inout [UInt8]) throws {
        let id = reader.sequence * depth + lane
        reader.sequence += 1
        line.removeAll(keepingCapacity: true)
        line += Self.envelope
        line += String(id).utf8
        line.append(0x2C)  // ,
        line += rest
        line.append(0x0A)
        reader.sentAt[lane] = Self.now()
        try Self.send(fd, line)
    }

    private static func send(_ fd: CInt, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if sent < 0 {
                // A short request into a socket with at most `depth` requests queued: the
                // buffer is almost never full; when it is, wait for room.
                if errno == EAGAIN || errno == EINTR {
                    var one = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&one, 1, 100)
                    continue
                }
                throw Failure(description: "write: \(String(cString: strerror(errno)))")
            }
            offset += sent
        }
    }

    func run(warmup: Double, duration: Double, daemonPID: Int32?) throws -> Result {
        let requests = (0..<connections).map { connection in (0..<depth).map { request(connection, $0) } }
        var readers = [Reader](repeating: Reader(sentAt: [UInt64](repeating: 0, count: depth)), count: connections)
        var latencies: [Double] = []
        latencies.reserveCapacity(Int(duration * 200_000))
        var answered = 0
        var errors = 0
        var line: [UInt8] = []
        var trace = ""
        var traceStart: UInt64?
        let window = try Self.drive(path: path, connections: connections, warmup: warmup, duration: duration, serverPID: daemonPID,
                                    begin: { connection, fd in
            for lane in 0..<depth {
                try send(fd, lane: lane, reader: &readers[connection], rest: requests[connection][lane], line: &line)
            }
        }, consume: { connection, fd, chunk, measuring in
            // Split the chunk at newlines; keep only each line's head and tail.
            let count = chunk.count
            var offset = 0
            while offset < count {
                let newline = memchr(chunk.baseAddress! + offset, 0x0A, count - offset).map { chunk.baseAddress!.distance(to: UnsafeRawPointer($0)) }
                let segmentEnd = newline ?? count
                let room = Self.headLimit - readers[connection].head.count
                if room > 0 {
                    readers[connection].head += chunk[offset..<min(segmentEnd, offset + room)]
                }
                let pastHead = max(offset, offset + Self.headLimit - readers[connection].length)
                if segmentEnd > pastHead {
                    // Bytes beyond the head: keep the last `headLimit` of them.
                    let from = max(pastHead, segmentEnd - Self.headLimit)
                    readers[connection].tail += chunk[from..<segmentEnd]
                    if readers[connection].tail.count > Self.headLimit {
                        readers[connection].tail.removeFirst(readers[connection].tail.count - Self.headLimit)
                    }
                }
                readers[connection].length += segmentEnd - offset
                offset = segmentEnd + 1
                guard newline != nil else { break }
                let head = readers[connection].head
                let tail = readers[connection].tail
                readers[connection].head.removeAll(keepingCapacity: true)
                readers[connection].tail.removeAll(keepingCapacity: true)
                readers[connection].length = 0
                guard let id = Self.answerID(head) else {
                    continue  // a notification (progress, dimensions): not an answer
                }
                let lane = id % depth
                let now = Self.now()
                if !Self.contains(head, marker), !Self.contains(tail, marker) {
                    if measuring, errors == 0 {
                        FileHandle.standardError.write(Data("first unexpected answer: ".utf8) + Data(head) + Data("\n".utf8))
                    }
                    if measuring { errors += 1 }
                }
                if measuring {
                    answered += 1
                    let latency = Double(now - readers[connection].sentAt[lane]) / 1000
                    latencies.append(latency)
                    if tracePath != nil {
                        let start = traceStart ?? now
                        traceStart = start
                        trace += "\(now - start) \(connection) \(latency)\n"
                    }
                }
                try send(fd, lane: lane, reader: &readers[connection], rest: requests[connection][lane], line: &line)
            }
        })
        if let tracePath {
            try trace.write(toFile: tracePath, atomically: false, encoding: .utf8)
        }
        latencies.sort()
        return Result(requests: answered, errors: errors, seconds: window.seconds, bytesReceived: window.bytesReceived,
                      latenciesMicroseconds: latencies, generatorCPUSeconds: window.generatorCPU, daemonCPUSeconds: window.serverCPU)
    }

    /// What `drive` measured over its window.
    struct Window {
        var seconds: Double
        var bytesReceived: Int
        var generatorCPU: Double
        var serverCPU: Double?
    }

    /// The closed loop every generator here shares: `connections` non-blocking connections to
    /// `path` in one `poll` set on this thread; `begin` sends each one's first requests, and
    /// every chunk read from a connection goes to `consume` (with whether the measured window
    /// has begun), which sends the next request as answers complete. Runs `warmup`, then
    /// `duration` seconds, and reports the window and the CPU time of both sides.
    static func drive(path: String, connections: Int, warmup: Double, duration: Double, serverPID: Int32?,
                      begin: (Int, CInt) throws -> Void,
                      consume: (Int, CInt, UnsafeRawBufferPointer, Bool) throws -> Void) throws -> Window {
        var descriptors: [CInt] = []
        defer { descriptors.forEach { close($0) } }
        for _ in 0..<connections {
            let fd = try connect(path)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            descriptors.append(fd)
        }
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let measureFrom = now() + UInt64(warmup * 1e9)
        let end = measureFrom + UInt64(duration * 1e9)
        var measuring = false
        var measureStart: UInt64 = 0
        var cpuAtStart = 0.0
        var serverCPUAtStart: Double?
        var bytesReceived = 0
        for connection in 0..<connections { try begin(connection, descriptors[connection]) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        loop: while true {
            let ready = poll(&polled, nfds_t(polled.count), 100)
            if ready < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "poll: \(String(cString: strerror(errno)))")
            }
            let time = now()
            if !measuring, time >= measureFrom {
                measuring = true
                measureStart = time
                cpuAtStart = cpuSeconds()
                serverCPUAtStart = serverPID.flatMap(cpuSeconds(pid:))
            }
            if time >= end { break loop }
            for connection in polled.indices where polled[connection].revents != 0 {
                let fd = descriptors[connection]
                let count = read(fd, buffer.baseAddress, buffer.count)
                if count == 0 { throw Failure(description: "the server closed a connection") }
                if count < 0 {
                    if errno == EAGAIN || errno == EINTR { continue }
                    throw Failure(description: "read: \(String(cString: strerror(errno)))")
                }
                if measuring { bytesReceived += count }
                try consume(connection, fd, UnsafeRawBufferPointer(rebasing: buffer[..<count]), measuring)
            }
        }
        let serverCPU = serverPID.flatMap(cpuSeconds(pid:)).map { $0 - (serverCPUAtStart ?? $0) }
        return Window(seconds: Double(now() - measureStart) / 1e9, bytesReceived: bytesReceived,
                      generatorCPU: cpuSeconds() - cpuAtStart, serverCPU: serverCPU)
    }
}
