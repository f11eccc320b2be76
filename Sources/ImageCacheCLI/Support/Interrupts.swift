import Foundation
import Synchronization

/// Thrown by `Interrupts.race` when Ctrl-C (SIGINT) or SIGTERM arrives first.
public struct Interrupted: Error, Sendable, CustomStringConvertible {
    /// The signal number.
    public var signal: Int32
    public var description: String { "interrupted by signal \(signal)" }
}

/// Ctrl-C as an event a command can wait for, so it can clean up (cancel downloads, stop the
/// demo's daemon, remove temp files) instead of dying mid-way.
///
/// While `race` runs, SIGINT and SIGTERM go to a handler that writes the signal's number into
/// a pipe (the self-pipe pattern); outside of it the default action is back, so a Ctrl-C there
/// still kills the process. Not a dispatch signal source: on Linux libdispatch reads signals
/// through a signalfd, which sees a signal only if every thread blocks it — a handler, or any
/// thread that does not block it, takes the signal first, and Ctrl-C was then lost (the demo's
/// sandbox ignored it). A handler, unlike SIG_IGN, is also reset to the default in children.
public enum Interrupts {
    /// Runs `work`; if SIGINT or SIGTERM arrives first, cancels it and throws `Interrupted`.
    public static func race<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let subscription = SignalPipe.shared.subscribe { continuation.yield($0) }
        let catching = SignalPipe.shared.isAvailable
        if catching { for sig in [SIGINT, SIGTERM] { install(signalPipeHandler, for: sig) } }
        defer {
            if catching {
                install(SIG_DFL, for: SIGINT)
                install(SIG_DFL, for: SIGTERM)
            }
            SignalPipe.shared.unsubscribe(subscription)
            continuation.finish()
        }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                for await sig in stream { throw Interrupted(signal: sig) }
                return nil
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let value = next { return value }
            }
            throw CancellationError()
        }
    }

    private static func install(_ handler: (@convention(c) (Int32) -> Void)?, for sig: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        sigaction(sig, &action, nil)
    }
}

/// The write end of the signal pipe, read by the handler. Set once, before any handler is
/// installed, and never changed; a plain C integer because a handler may touch nothing else.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Writes the signal's number into the pipe: `write` is async-signal-safe, and the write end
/// is non-blocking, so a full pipe drops a repeat signal rather than hanging the handler.
/// Global, not a closure, because C calls it on whichever thread the signal lands (FIELD-NOTES).
private func signalPipeHandler(_ signal: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: signal)
    _ = write(signalPipeWriteEnd, &byte, 1)
    errno = saved
}

/// The pipe the handler writes into and a thread that reads it, handing each signal to
/// whoever is racing at the time. Made once per process, on the first race.
private final class SignalPipe: Sendable {
    static let shared: SignalPipe = {
        let pipe = SignalPipe()
        pipe.startReading()
        return pipe
    }()

    /// The read end, or -1 when no pipe could be made: then no handler is installed and
    /// Ctrl-C keeps its default action (the command dies, as it would have without `race`).
    private let readEnd: Int32
    private let subscribers = Mutex<(next: Int, byID: [Int: @Sendable (Int32) -> Void])>((0, [:]))

    var isAvailable: Bool { readEnd >= 0 }

    private init() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            readEnd = -1
            return
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        signalPipeWriteEnd = ends[1]
        readEnd = ends[0]
    }

    private func startReading() {
        guard isAvailable else { return }
        let thread = Thread { [self] in
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return }
                let handlers = subscribers.withLock { Array($0.byID.values) }
                for handler in handlers { handler(Int32(byte)) }
            }
        }
        thread.name = "imagecache.signals"
        thread.start()
    }

    func subscribe(_ handler: @escaping @Sendable (Int32) -> Void) -> Int {
        subscribers.withLock { state in
            state.next += 1
            state.byID[state.next] = handler
            return state.next
        }
    }

    func unsubscribe(_ id: Int) {
        _ = subscribers.withLock { $0.byID.removeValue(forKey: id) }
    }
}
