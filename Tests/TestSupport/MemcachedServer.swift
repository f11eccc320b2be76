import Foundation
import ImageCacheSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real memcached (Debian's 1.6, installed by `scripts/install-deps`) on a free loopback
/// port, for the shared tier's tests: start, kill (SIGKILL, as a crashed node), restart on the
/// same port, and plant a raw value under a wire key.
///
/// Readiness is an event, not a poll: memcached runs with `-vv`, its stderr goes to a file,
/// and `start` waits (inotify, `FileGrowth`) for the line it prints once its listening socket
/// is open; then `verbosity 0` quiets it so the file stops growing with every command. A port
/// another test took in the meantime makes memcached exit: a new port is tried (three times).
public final class MemcachedServer: @unchecked Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case notStarted(String)
        public var description: String { if case .notStarted(let why) = self { return why }; return "" }
    }

    /// The port it listens on (kept across restarts).
    public private(set) var port: Int
    /// `127.0.0.1:PORT`, as `[shared] servers` names it.
    public var address: String { "127.0.0.1:\(port)" }
    private let folder: String
    private let memory: Int
    private var process: ChildProcess?
    private let lock = NSLock()

    private init(port: Int, folder: String, memory: Int) {
        self.port = port
        self.folder = folder
        self.memory = memory
    }

    /// Starts one memcached with `memoryMegabytes` of item memory.
    public static func start(memoryMegabytes: Int = 64) async throws -> MemcachedServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("memcached-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var lastError: any Error = Failure.notStarted("memcached did not start")
        for _ in 0..<3 {
            let server = MemcachedServer(port: try freeLoopbackPort(), folder: folder, memory: memoryMegabytes)
            do {
                try await server.launch()
                return server
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// Kills the process (SIGKILL: no goodbye to its clients) and waits (at most 30 s) for it
    /// to be gone.
    public func kill() async {
        let running = lock.withLock { () -> ChildProcess? in
            defer { process = nil }
            return process
        }
        guard let running else { return }
        running.signal(SIGKILL)
        _ = await running.exit(within: 30)
    }

    /// Starts it again on the same port, empty.
    public func restart() async throws {
        await kill()
        try await launch()
    }

    /// Stores `value` under the wire key `key` (already prefixed/hashed as the client sends
    /// it), bypassing any client: a corrupt or foreign value for the reader to refuse.
    public func plant(_ key: String, _ value: [UInt8], ttl: Int = 300) throws {
        var request = Array("ms \(key) \(value.count) T\(ttl)\r\n".utf8)
        request += value
        request += Array("\r\n".utf8)
        let answer = try exchange(request)
        guard answer.hasPrefix("HD") else { throw Failure.notStarted("planting answered \(answer)") }
    }

    /// One figure of memcached's `stats` (`curr_items`, `get_hits`, `cmd_set`…).
    public func statistic(_ name: String) throws -> Int? {
        let answer = try exchange(Array("stats\r\n".utf8), until: "END\r\n", wholeAnswer: true)
        for line in answer.components(separatedBy: "\r\n") {
            let parts = line.split(separator: " ")
            if parts.count == 3, parts[0] == "STAT", parts[1] == name { return Int(parts[2]) }
        }
        return nil
    }

    /// Sends raw bytes and returns the first line of the answer, or the whole answer up to
    /// `until` (a blocking socket with a two-second receive time-out: for fixtures only).
    public func exchange(_ request: [UInt8], until terminator: String = "\n", wholeAnswer: Bool = false) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw POSIXError(.init(rawValue: errno) ?? .ECONNREFUSED) }
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = Array(terminator.utf8)
        while received.firstRange(of: end) == nil {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            received += buffer[0..<n]
        }
        let text = String(decoding: received, as: UTF8.self)
        return wholeAnswer ? text : text.components(separatedBy: "\r\n").first ?? ""
    }

    private func launch() async throws {
        let log = "\(folder)/stderr-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = try ChildProcess("/usr/bin/memcached",
                                       arguments: ["-u", "root", "-l", "127.0.0.1", "-p", "\(port)", "-U", "0", "-m", "\(memory)", "-vv"],
                                       environment: ["PATH=/usr/bin:/bin"],
                                       stdout: .discard, stderr: .file(path: log, append: true, mode: 0o600))
        lock.withLock { self.process = process }
        do {
            try await FileGrowth.waitUntil(log, contains: "server listening", seconds: 10)
        } catch {
            await kill()
            throw Failure.notStarted("memcached on port \(port) did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        _ = try exchange(Array("verbosity 0\r\n".utf8))
    }

    /// Whether the process is running.
    public var isRunning: Bool { lock.withLock { process?.isRunning ?? false } }

    deinit {
        // Its waiter thread reaps it.
        process?.signal(SIGKILL)
        try? FileManager.default.removeItem(atPath: folder)
    }

    private static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
