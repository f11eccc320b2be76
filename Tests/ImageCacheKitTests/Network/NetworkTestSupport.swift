import Foundation
import ImageCacheConfig
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import TestSupport

/// Shared set-up of the network suites: an engine allowed to reach the loopback server, with
/// fast retries so fault tests finish quickly.
///
/// The stall and transfer deadlines are far beyond any test's time limit: a test that holds a
/// response open (`.stall`, `.held`) owns that window and ends it itself (a cancel, a release),
/// so a slow machine (a loaded CI box, ThreadSanitizer) cannot end it behind the test's back.
/// The tests of those deadlines set short ones explicitly.
enum NetworkFixture {
    static func configuration(_ tweak: (inout CacheConfiguration.Network) -> Void = { _ in }) -> CacheConfiguration {
        var configuration = CacheConfiguration()
        configuration.network.allowHTTP = true
        configuration.network.allowedHosts = ["127.0.0.1"]
        configuration.network.connectTimeout = .seconds(5)
        configuration.network.stallTimeout = .seconds(600)
        configuration.network.transferTimeout = .seconds(900)
        tweak(&configuration.network)
        return configuration
    }

    static func options(_ tweak: (inout TransferEngine.Options) -> Void = { _ in }) -> TransferEngine.Options {
        var options = TransferEngine.Options()
        options.retry = RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(20), maxDelay: .milliseconds(80))
        tweak(&options)
        return options
    }

    static func engine(_ tweak: (inout CacheConfiguration.Network) -> Void = { _ in },
                       options: (inout TransferEngine.Options) -> Void = { _ in }) -> TransferEngine {
        TransferEngine(configuration: configuration(tweak), options: self.options(options))
    }

    /// A real JPEG from the corpus.
    static func photo() throws -> [UInt8] {
        try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg")
    }

    /// Runs `body` with a fresh image server, shutting it down afterwards.
    static func withServer<T: Sendable>(_ body: (ImageServer) async throws -> T) async throws -> T {
        let server = try await ImageServer.start()
        do {
            let result = try await body(server)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }
}

/// Collects a transfer's events (they arrive on the curl thread) and lets a test wait for
/// one without sleeping: the stream ends its wait when the task is cancelled.
final class EventLog: Sendable {
    private let events = LockedState<[TransferEvent]>([])
    private let stream: AsyncStream<TransferEvent>
    private let continuation: AsyncStream<TransferEvent>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: TransferEvent.self)
    }

    var handler: @Sendable (TransferEvent) -> Void {
        { [self] event in
            events.withLock { $0.append(event) }
            continuation.yield(event)
        }
    }

    var all: [TransferEvent] { events.withLock { $0 } }

    var progress: [(Int, Int?)] {
        all.compactMap { if case .progress(let r, let e) = $0 { return (r, e) } else { return nil } }
    }

    /// Waits for the first event that matches (call once per log; bound it with `withTimeout`).
    func waitFor(_ matches: @Sendable (TransferEvent) -> Bool) async -> Bool {
        for await event in stream where matches(event) { return true }
        return false
    }
}

