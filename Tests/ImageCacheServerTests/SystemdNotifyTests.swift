import Foundation
import Glibc
import ImageCacheServer
import Testing
import TestSupport

/// A notification socket as systemd opens one: a real AF_UNIX datagram socket, bound to a
/// path or to an abstract name.
final class NotifySocket: Sendable {
    let fd: CInt
    /// The value to put in `NOTIFY_SOCKET`.
    let address: String

    init(abstract: Bool) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let name = abstract ? "imagecached-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))" : TestServer.makeFolder() + "/notify"
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = abstract ? [0] + Array(name.utf8) : Array(name.utf8) + [0]
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        fd = descriptor
        self.address = abstract ? "@" + name : name
    }

    /// The next datagram, waiting up to `timeout` seconds for it (poll, not a sleep). The
    /// wait blocks a thread, so it runs off the concurrency pool.
    func receive(timeout: Double = 30) async throws -> String? {
        let fd = self.fd
        return try await offCooperativePool {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(timeout * 1000)) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count >= 0 else { return nil }
            return String(decoding: buffer[..<count], as: UTF8.self)
        }
    }

    deinit {
        close(fd)
        if !address.hasPrefix("@") { unlink(address) }
    }
}

@Suite("systemd notification", .timeLimit(.minutes(1)))
struct SystemdNotifyTests {
    @Test("READY=1 and STATUS= arrive as one datagram on a path socket")
    func readyOnPath() async throws {
        let socket = try NotifySocket(abstract: false)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        #expect(notifier.ready(status: "Serving on /x"))
        #expect(try await socket.receive() == "READY=1\nSTATUS=Serving on /x")
    }

    @Test("an address starting with @ is the abstract namespace")
    func abstractAddress() async throws {
        let socket = try NotifySocket(abstract: true)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        #expect(notifier.stopping(status: "Shutting down"))
        #expect(try await socket.receive() == "STOPPING=1\nSTATUS=Shutting down")
    }

    @Test("a supervisor that stops reading never blocks the sender: a full queue drops datagrams")
    func fullQueueNeverBlocks() async throws {
        let socket = try NotifySocket(abstract: true)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        // Far more than net.unix.max_dgram_qlen (10 by default): a blocking send would wait
        // here for good, so the sends run off the pool under a bound.
        let sent = try await withTimeout(seconds: 20) {
            try await offCooperativePool { (0..<200).map { notifier.notify(["STATUS=beat \($0)"]) } }
        }
        #expect(sent.first == true)
        #expect(sent.contains(false))
        // What was queued is intact and in order.
        #expect(try await socket.receive() == "STATUS=beat 0")
    }

    @Test("without NOTIFY_SOCKET nothing is sent and nothing fails")
    func noSocket() {
        #expect(!SystemdNotifier(environment: [:]).ready(status: "x"))
    }
}
