import CCurl
import ImageCacheProtocol

/// What other threads ask of the curl thread. Everything that touches curl's handles goes
/// through here, so the multi handle is only ever used by its own thread.
enum EngineCommand: Sendable {
    case start(TransferRequest, TransferHandle, (@Sendable (TransferEvent) -> Void)?)
    case cancel(id: UInt64, reason: String)
    case reprioritize(id: UInt64, priority: TransferPriority)
    /// A consumer is done with a body that awaited its release.
    case bodyReleased
    case shutdown
}

/// The curl thread's inbox: commands queue under a lock and `curl_multi_wakeup` interrupts
/// the thread's `curl_multi_poll` at once, so a cancellation takes effect within milliseconds.
final class CommandSink: Sendable {
    /// The multi handle, used here only for `curl_multi_wakeup`, which libcurl documents as
    /// callable from any thread. Wrapped because raw pointers are not Sendable; the wakeup
    /// happens under `inbox`'s lock, and the thread closes the inbox before it frees the handle.
    private struct WakeTarget: @unchecked Sendable { let multi: UnsafeMutableRawPointer }
    private let target: WakeTarget
    private let inbox = LockedState(Inbox())

    private struct Inbox {
        var commands: [EngineCommand] = []
        var closed = false
    }

    init(multi: UnsafeMutableRawPointer) {
        target = WakeTarget(multi: multi)
    }

    /// Queues a command and wakes the thread. After shutdown a start is answered `cancelled`
    /// at once and other commands are dropped (there is nothing left to act on).
    func send(_ command: EngineCommand) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.commands.append(command)
            curl_multi_wakeup(target.multi)
            return true
        }
        if !accepted, case .start(_, let handle, _) = command {
            handle.finish(.failure(Cancellation.shutdown))
        }
    }

    /// Takes every queued command (called by the curl thread).
    func drain() -> [EngineCommand] {
        inbox.withLock { inbox in
            defer { inbox.commands.removeAll(keepingCapacity: true) }
            return inbox.commands
        }
    }

    /// Refuses further commands and returns those still queued (called by the curl thread
    /// before it frees the multi handle).
    func close() -> [EngineCommand] {
        inbox.withLock { inbox in
            inbox.closed = true
            defer { inbox.commands = [] }
            return inbox.commands
        }
    }
}
