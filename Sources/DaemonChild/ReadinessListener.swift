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
///
/// Any local process can send to an abstract name, so, as systemd does, the kernel is asked
/// for each datagram's sender (`SO_PASSCRED`) and only the daemon's own `READY=1` counts;
/// another process's is read and ignored.
final class ReadinessListener: Sendable {
    /// The value for `NOTIFY_SOCKET` (`@` marks the abstract namespace).
    let address: String
    private let fd: Int32
    /// Written to end a wait early (a cancelled wait): poll watches it beside `fd`.
    private let wake: CloseOnExecPipe
    /// `READY=1` datagrams read from a process other than the one awaited.
    private let ignoredCount = LockedState(0)

    /// How many `READY=1` datagrams came from another process than the one awaited.
    var ignored: Int { ignoredCount.withLock { $0 } }

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
        var on: Int32 = 1
        guard bound == 0, setsockopt(descriptor, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
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

    /// Returns true once a datagram carrying `READY=1` arrives from process `sender`, false
    /// when the waiting task is cancelled first. The wait blocks a thread of its own, never one
    /// of the cooperative pool. One wait per listener: a cancelled wait leaves the listener
    /// woken for good.
    func ready(from sender: pid_t) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                Thread { [self] in continuation.resume(returning: readBlocking(from: sender)) }.start()
            }
        } onCancel: {
            var byte: UInt8 = 1
            _ = write(wake.write, &byte, 1)
        }
    }

    private func readBlocking(from sender: pid_t) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var watched = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            let count = poll(&watched, 2, -1)
            if count < 0, errno == EINTR { continue }
            if count < 0 || watched[1].revents != 0 { return false }
            guard let (received, pid) = receive(into: &buffer) else { continue }
            let fields = String(decoding: buffer[..<received], as: UTF8.self).split(separator: "\n")
            guard fields.contains("READY=1") else { continue }
            if pid == sender { return true }
            ignoredCount.withLock { $0 += 1 }
        }
    }

    /// One datagram into `buffer`: its length and its sender's pid as the kernel gives it
    /// (`SCM_CREDENTIALS`, 0 when none came); nil when nothing could be read.
    private func receive(into buffer: inout [UInt8]) -> (Int, pid_t)? {
        // The control message: a `cmsghdr` (a 64-bit length, level, type: 16 bytes) and a
        // `struct ucred` (pid, uid, gid: 3 × 32 bits), padded to 8 bytes: 32 in all. Read with
        // unaligned loads: an array's bytes promise no alignment for an `Int`.
        let headerSize = 16, credentialsSize = 12
        var control = [UInt8](repeating: 0, count: 32)
        let received = buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    let count = recvmsg(fd, &message, Int32(MSG_DONTWAIT))
                    return count < 0 ? nil : (count, message.msg_controllen)
                }
            }
        }
        guard let (count, controlLength) = received else { return nil }
        // SCM_CREDENTIALS is 2 on Linux; Swift's Glibc module leaves the name out (_GNU_SOURCE).
        let scmCredentials: Int32 = 2
        var pid: pid_t = 0
        if controlLength >= headerSize + credentialsSize {
            control.withUnsafeBytes { bytes in
                let length = bytes.loadUnaligned(fromByteOffset: 0, as: Int.self)
                let level = bytes.loadUnaligned(fromByteOffset: 8, as: Int32.self)
                let type = bytes.loadUnaligned(fromByteOffset: 12, as: Int32.self)
                if length >= headerSize + credentialsSize, level == SOL_SOCKET, type == scmCredentials {
                    pid = bytes.loadUnaligned(fromByteOffset: headerSize, as: pid_t.self)
                }
            }
        }
        return (count, pid)
    }

    deinit {
        close(fd)
        close(wake.read)
        close(wake.write)
    }
}
