#if canImport(Glibc)
import Glibc
#endif

/// `sd_notify(3)` without libsystemd: one datagram of `KEY=value` lines to `$NOTIFY_SOCKET`.
///
/// The daemon sends `READY=1` once it accepts connections (so `Type=notify` units and their
/// dependants start at the right moment), `RELOADING=1` around a SIGHUP reload, `STOPPING=1`
/// when it begins to shut down, and a human-readable `STATUS=` with each. Outside systemd
/// (`NOTIFY_SOCKET` unset) every call does nothing.
public struct SystemdNotifier: Sendable {
    /// The notification socket's address as systemd gave it; `@` means the abstract namespace.
    public let socketPath: String?

    /// Reads `NOTIFY_SOCKET` from `environment`.
    public init(environment: [String: String]) {
        let value = environment["NOTIFY_SOCKET"]
        socketPath = (value?.isEmpty ?? true) ? nil : value
    }

    /// Sends `fields` as one datagram. Returns false when there is no socket or the send
    /// failed (a missing supervisor is not a reason to stop serving).
    ///
    /// Never blocks: a datagram socket whose reader has stopped reading holds only
    /// `net.unix.max_dgram_qlen` datagrams (10 by default), and a blocking send then waits for
    /// good — on the event loop that pings the watchdog, which froze the whole daemon (found
    /// by a test that stopped reading its notify socket). A full queue drops the datagram.
    @discardableResult
    public func notify(_ fields: [String]) -> Bool {
        guard let socketPath else { return false }
        let abstract = socketPath.hasPrefix("@")
        guard let address = try? UnixAddress(path: abstract ? String(socketPath.dropFirst()) : socketPath, abstract: abstract) else {
            return false
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let message = Array(fields.joined(separator: "\n").utf8)
        let sent = message.withUnsafeBytes { bytes in
            address.withSockAddr { sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), $0, $1) }
        }
        return sent == message.count
    }

    /// `READY=1` with a status line.
    @discardableResult
    public func ready(status: String) -> Bool { notify(["READY=1", "STATUS=\(status)"]) }

    /// `STOPPING=1` with a status line.
    @discardableResult
    public func stopping(status: String) -> Bool { notify(["STOPPING=1", "STATUS=\(status)"]) }

    /// `RELOADING=1` with the monotonic timestamp newer systemd versions ask for.
    @discardableResult
    public func reloading(status: String) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return notify(["RELOADING=1", "MONOTONIC_USEC=\(microseconds)", "STATUS=\(status)"])
    }

    /// A STATUS= update alone.
    @discardableResult
    public func status(_ text: String) -> Bool { notify(["STATUS=\(text)"]) }
}
