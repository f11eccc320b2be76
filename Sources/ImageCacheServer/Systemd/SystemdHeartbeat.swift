#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// The daemon's pulse to systemd while it serves: `WATCHDOG=1` at half the unit's
/// `WatchdogSec=` (so a daemon whose event loops hang is killed and restarted by systemd), and
/// a `STATUS=` line with live figures, so `systemctl status imagecached` shows what it is doing
/// (`Serving on /run/imagecached/imagecached.sock: 3 sessions, 1204 thumbnails in memory, …`).
///
/// The ping is sent from one of the daemon's own event loops, not from a thread of its own:
/// a ping proves that loop still runs tasks. Outside systemd (`NOTIFY_SOCKET` unset) nothing
/// is scheduled.
public final class SystemdHeartbeat: Sendable {
    /// How often `STATUS=` is refreshed when no watchdog asks for more often.
    public static let statusInterval: TimeAmount = .seconds(5)

    private let task: RepeatedTask?

    /// Starts beating on `loop`.
    ///
    /// - Parameters:
    ///   - notifier: where the datagrams go (does nothing outside systemd).
    ///   - environment: `WATCHDOG_USEC` and `WATCHDOG_PID` (set by systemd with `WatchdogSec=`).
    ///   - status: the status line now; called on `loop`, so it must be cheap.
    public init(notifier: SystemdNotifier, environment: [String: String], loop: any EventLoop,
                status: @escaping @Sendable () -> String) {
        guard notifier.socketPath != nil else {
            task = nil
            return
        }
        let watchdog = Self.watchdogInterval(environment: environment, pid: getpid())
        let interval = watchdog.map { min(.nanoseconds($0.nanoseconds / 2), Self.statusInterval) } ?? Self.statusInterval
        // READY=1 carried the first status: the first beat comes one interval later.
        task = loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            var fields = ["STATUS=\(status())"]
            if watchdog != nil { fields.append("WATCHDOG=1") }
            notifier.notify(fields)
        }
    }

    /// Stops beating (before `STOPPING=1`, so no late status overwrites it).
    public func stop() {
        task?.cancel()
    }

    /// The unit's watchdog timeout when it is meant for this process: `WATCHDOG_USEC` positive,
    /// and `WATCHDOG_PID` absent or `pid`. Nil otherwise (no `WatchdogSec=`, or a variable
    /// inherited by a child it was not meant for).
    public static func watchdogInterval(environment: [String: String], pid: pid_t) -> TimeAmount? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"], owner != String(pid) { return nil }
        // A value beyond a day is as good as a day (and cannot overflow the nanoseconds).
        return .microseconds(min(microseconds, 86_400_000_000))
    }
}
