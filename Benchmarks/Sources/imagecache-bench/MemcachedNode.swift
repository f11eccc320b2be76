import DaemonChild
import Foundation
import ImageCacheKit
#if canImport(Glibc)
import Glibc
#endif

/// A real memcached (Debian's) on a loopback port, for the shared tier: started, killed with
/// SIGKILL and started again on the same port, and asked for its `stats` over TCP.
/// Only this process is ever signalled, by its pid.
final class MemcachedNode: Sendable {
    let port: Int
    private let running = LockedState<Process?>(nil)

    init(port: Int) { self.port = port }

    var address: String { "127.0.0.1:\(port)" }

    /// Starts memcached and waits (bounded) until it answers `stats`.
    func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/memcached")
        var arguments = ["-l", "127.0.0.1", "-p", String(port), "-U", "0", "-m", "64"]
        if getuid() == 0 { arguments = ["-u", "root"] + arguments }
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        running.withLock { $0 = process }
        let deadline = ContinuousClock.now + .seconds(10)
        while stats() == nil {
            guard process.isRunning, ContinuousClock.now < deadline else {
                if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
                throw DaemonProcess.Failure(description: "memcached on port \(port) did not start")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// SIGKILL: the node vanishes mid-operation, as a crashed host does.
    func kill() {
        guard let process = running.withLock({ $0 }), process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        running.withLock { $0 = nil }
    }

    /// `stats` as name → value, or nil when the node does not answer within a second.
    func stats() -> [String: String]? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let request = Array("stats\r\n".utf8)
        guard request.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == request.count else { return nil }
        var text = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 8192)
        while !text.suffix(5).elementsEqual(Array("END\r\n".utf8)) {
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard got > 0, text.count < 1 << 20 else { return nil }
            text += buffer[0..<got]
        }
        var result: [String: String] = [:]
        for line in String(decoding: text, as: UTF8.self).split(separator: "\r\n") {
            let parts = line.split(separator: " ")
            if parts.count == 3, parts[0] == "STAT" { result[String(parts[1])] = String(parts[2]) }
        }
        return result
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw DaemonProcess.Failure(description: "no free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
