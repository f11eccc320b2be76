@testable import DaemonChild
import Foundation
import Glibc
import ImageCacheSupport
import Testing
import TestSupport

/// The readiness socket counts only the awaited process's `READY=1`: its abstract name can be
/// written by any local process, and a stray one must not pass for the daemon's start.
@Suite("Daemon process helper: readiness from the awaited process only", .timeLimit(.minutes(1)))
struct ReadinessSenderTests {
    /// Sends `text` as one datagram from this process to the listener's abstract address.
    private func send(_ text: String, to address: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var target = sockaddr_un()
        target.sun_family = sa_family_t(AF_UNIX)
        let bytes = [0] + Array(address.dropFirst().utf8)
        withUnsafeMutableBytes(of: &target.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let sent = Array(text.utf8).withUnsafeBytes { payload in
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, payload.baseAddress, payload.count, 0, $0, length) }
            }
        }
        #expect(sent == text.utf8.count)
    }

    @Test("another process's READY=1 is ignored; the awaited child's own is taken")
    func onlyTheChild() async throws {
        let listener = try ReadinessListener()
        // Sent before the child exists, so it is the first datagram the wait reads.
        try send("READY=1", to: listener.address)
        let script = "import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b'READY=1', '\\0' + '\(listener.address.dropFirst())')"
        let child = try ChildProcess("/usr/bin/python3", arguments: ["-c", script], environment: [], stdout: .discard)
        let ready = try await withTimeout(seconds: 30) { await listener.ready(from: child.pid) }
        #expect(ready)
        #expect(listener.ignored == 1, "the test process's READY=1 was read and not taken")
        #expect(await child.exit(within: 30) == 0)
    }
}
