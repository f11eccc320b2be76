import Foundation
import ImageCacheSupport
#if canImport(Glibc)
import Glibc
#endif

/// A notification socket of this process's own, handed to the daemon as `NOTIFY_SOCKET`
/// exactly as systemd hands one to a `Type=notify` service: the daemon sends `READY=1` the
/// moment it accepts connections, so the start is awaited as that event, never by polling
/// the socket between sleeps.
///
/// An AF_UNIX datagram socket bound to a random name in the abstract namespace (nothing to
/// remove from a folder afterwards). Datagrams other than `READY=1` (`STATUS=` heartbeats)
/// are read and ignored; once no one reads, the daemon's sends fail without blocking it.
final class ReadinessListener: Sendable {
    /// The value for `NOTIFY_SOCKET` (`@` marks the abstract namespace).
    let address: String
    private let fd: Int32
    /// Written to end a wait early (a cancelled wait): poll watches it beside `fd`.
    private let wake: CloseOnExecPipe

    init() throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw DaemonProcess.Failure(description: "notification socket: \(String(cString: strerror(errno)))") }
        let name = "imagecached-ready-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [0] + Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw DaemonProcess.Failure(description: "notification socket: \(reason)")
        }
        do {
            wake = try CloseOnExecPipe()
        } catch {
            close(descriptor)
            throw error
        }
        fd = descriptor
        self.address = "@" + name
    }

    /// Returns true once a datagram carrying `READY=1` arrives, false when the waiting task is
    /// cancelled first. The wait blocks a thread of its own, never one of the cooperative pool.
    /// One wait per listener: a cancelled wait leaves the listener woken for good.
    func ready() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                Thread { [self] in continuation.resume(returning: readBlocking()) }.start()
            }
        } onCancel: {
            var byte: UInt8 = 1
            _ = write(wake.write, &byte, 1)
        }
    }

    private func readBlocking() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var watched = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            let count = poll(&watched, 2, -1)
            if count < 0, errno == EINTR { continue }
            if count < 0 || watched[1].revents != 0 { return false }
            let received = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if received < 0 { continue }
            let fields = String(decoding: buffer[..<received], as: UTF8.self).split(separator: "\n")
            if fields.contains("READY=1") { return true }
        }
    }

    deinit {
        close(fd)
        close(wake.read)
        close(wake.write)
    }
}
