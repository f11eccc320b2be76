#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// SIGHUP as an async sequence: one element per signal (several quick ones may coalesce,
/// which a reload does not mind).
///
/// swift-service-lifecycle handles SIGTERM/SIGINT; SIGHUP means "reload", which it leaves to
/// the application. The default action of SIGHUP is to terminate, so the handler is installed
/// before the daemon reports ready, and stays installed until the process exits.
final class HangupSignals: AsyncSequence, Sendable {
    typealias Element = Void

    // `DispatchSourceSignal` is not marked Sendable; the source is created here, only ever
    // cancelled through `stop()`, and Dispatch serialises its own state.
    private nonisolated(unsafe) let source: any DispatchSourceSignal
    private let stream: AsyncStream<Void>

    init() {
        signal(SIGHUP, SIG_IGN)
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.stream = stream
        source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler { continuation.yield() }
        source.setCancelHandler { continuation.finish() }
        source.resume()
    }

    func stop() {
        source.cancel()
    }

    func makeAsyncIterator() -> AsyncStream<Void>.AsyncIterator {
        stream.makeAsyncIterator()
    }
}
