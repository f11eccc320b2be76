import Dispatch
import Foundation

/// Thrown by `Interrupts.race` when Ctrl-C (SIGINT) or SIGTERM arrives first.
public struct Interrupted: Error, Sendable, CustomStringConvertible {
    /// The signal number.
    public var signal: Int32
    public var description: String { "interrupted by signal \(signal)" }
}

/// Ctrl-C as an event a command can wait for, so it can clean up (cancel downloads, stop the
/// demo's daemon, remove temp files) instead of dying mid-way.
///
/// The default action of SIGINT/SIGTERM is replaced by a dispatch source while `race` runs,
/// and restored after, so a second Ctrl-C outside of it still kills the process.
public enum Interrupts {
    /// Runs `work`; if SIGINT or SIGTERM arrives first, cancels it and throws `Interrupted`.
    public static func race<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let queue = DispatchQueue(label: "imagecache.signals")
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            // A no-op handler rather than SIG_IGN: an ignored signal stays ignored in every
            // child across exec, so the demo's daemon would not stop on SIGTERM; a handler
            // is reset to the default in the child.
            signal(sig, interruptsIgnoreSignal)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { continuation.yield(sig) }
            source.resume()
            sources.append(source)
        }
        defer {
            for source in sources { source.cancel() }
            continuation.finish()
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
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
}

/// Keeps SIGINT/SIGTERM from killing the process while a dispatch source reports them.
/// Global, not a closure, because C calls it on whichever thread the signal lands (FIELD-NOTES).
private func interruptsIgnoreSignal(_ signal: Int32) {}
