import ImageCacheServer
import TestSupport

/// Methods only tests register: they make the server do what later features will (long
/// work, floods of notifications) so the transport rules can be checked now.
struct TestMethods {
    /// What the test handlers did, in order: `started:KEY`, `cancelled:KEY`, `flooded`.
    let events: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    init() {
        (events, continuation) = AsyncStream<String>.makeStream()
    }

    struct BlockParams: RPCParams { var key: String }
    struct FloodParams: RPCParams { var count: Int; var size: Int; var method: String }

    enum Block: RPCMethod {
        typealias Params = BlockParams
        typealias Result = String
        static let name: MethodName = "test.block"
    }

    enum Echo: RPCMethod {
        typealias Params = BlockParams
        typealias Result = String
        static let name: MethodName = "test.echo"
    }

    enum Flood: RPCMethod {
        typealias Params = FloodParams
        typealias Result = Int
        static let name: MethodName = "test.flood"
    }

    /// `test.echo {key}` answers its key from a task (an ordinary asynchronous method);
    /// `test.block {key}` runs until cancelled; `test.flood {count, size, method}` sends
    /// `count` notifications of about `size` bytes, then answers.
    func register(in router: inout RPCRouter) {
        let events = continuation
        router.register(Block.self, .task { params, _ in
            events.yield("started:\(params.key)")
            do {
                // Stands for long work; only cancellation ends it.
                try await Task.sleep(for: .seconds(3600))
            } catch {
                events.yield("cancelled:\(params.key)")
                throw error
            }
            return "finished"
        })
        router.register(Echo.self, .task { params, _ in
            await Task.yield()
            return params.key
        })
        router.register(Flood.self, .task { params, context in
            let pad = JSONValue.string(String(repeating: "x", count: params.size))
            for index in 0..<params.count {
                context.session.notify(method: params.method, params: JSONValue.object(["i": .int(index), "pad": pad]))
            }
            events.yield("flooded")
            return params.count
        })
    }

    /// Waits until the test handlers report `event` (consumes the events before it).
    func wait(for event: String, timeout: Double = 60) async throws {
        let events = self.events
        try await withTimeout(seconds: timeout) {
            for await seen in events where seen == event { return }
            throw StreamEnded(event: event)
        }
    }
}

/// The test handlers' event stream ended before the awaited event.
struct StreamEnded: Error {
    let event: String
}

/// A method a test registers to see how its answer leaves (counted, claimed, mapped): it takes
/// no params and answers a number, so a test only names it.
protocol NumberMethod: RPCMethod where Params == NoParams, Result == Int {}
