import NIOConcurrencyHelpers
import Foundation
import ImageCacheClient

/// A stand-in for the daemon on a real Unix socket in a temporary folder: it reports every
/// line a client sends and answers only what the test tells it, in any order.
///
/// Plain POSIX sockets on a thread of its own, so it shares no code with the client under
/// test (a framing bug in the client cannot be hidden by the same bug in the peer).
final class ScriptedPeer: Sendable {
    /// What the peer saw: a message from the client, or the client going away.
    enum Event: Sendable {
        case connected
        case message([String: JSONValue])
        case disconnected
    }

    let socketPath: String
    /// Every event, in order. Iterate it in the test's own task.
    let events: AsyncStream<Event>

    private let folder: String
    private let listenFD: Int32
    private let connection = ConnectionSlot()
    private let eventSink: AsyncStream<Event>.Continuation

    /// The connected client's descriptor, shared by the reading thread and the test's tasks.
    /// The accepted connection's descriptor and whether the peer was stopped. Only the peer's
    /// thread closes descriptors, and it does so under this lock: a descriptor number freed by
    /// `close` is soon reused by another test's socket, so nothing may touch a number after
    /// its close (a stale `accept` or `write` would land on that other test's socket).
    private final class ConnectionSlot: Sendable {
        struct State {
            var fd: Int32 = -1
            var stopped = false
        }
        let state = NIOLockedValueBox(State())
        var fd: Int32 { state.withLockedValue { $0.fd } }
    }

    init() throws {
        var template = Array("/tmp/icc-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        let folder = String(cString: made)
        let path = folder + "/d.sock"
        self.folder = folder
        socketPath = path
        (events, eventSink) = AsyncStream<Event>.makeStream()

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        listenFD = fd
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else { throw POSIXError(.EADDRINUSE) }

        let sink = eventSink
        let connection = self.connection
        let thread = Thread {
            while true {
                let client = accept(fd, nil, nil)
                let accepted = connection.state.withLockedValue { state -> Bool in
                    guard client >= 0, !state.stopped else { return false }
                    state.fd = client
                    return true
                }
                guard accepted else {
                    if client >= 0 { close(client) }
                    break
                }
                sink.yield(.connected)
                ScriptedPeer.readLines(fd: client, sink: sink)
                connection.state.withLockedValue { state in
                    if state.fd == client { state.fd = -1 }
                    close(client)
                }
            }
            close(fd)
        }
        thread.start()
    }

    private static func readLines(fd: Int32, sink: AsyncStream<Event>.Continuation) {
        var pending = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            pending += chunk[0..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(pending[..<newline])
                pending.removeSubrange(...newline)
                if let object = try? JSONDecoder().decode(JSONValue.self, from: line).objectValue {
                    sink.yield(.message(object))
                }
            }
        }
        sink.yield(.disconnected)
    }

    /// Writes `text` and a newline to the connected client.
    func send(_ text: String) {
        sendRaw(text + "\n")
    }

    /// Writes `text` exactly as given (no newline added).
    func sendRaw(_ text: String) {
        let bytes = Array(text.utf8)
        // Under the lock, so the descriptor cannot be closed (and its number reused) mid-write.
        connection.state.withLockedValue { state in
            guard state.fd >= 0 else { return }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(state.fd, $0.baseAddress, $0.count) }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    func answer(_ id: JSONValue, result: String) {
        send(#"{"jsonrpc":"2.0","id":\#(Self.text(id)),"result":\#(result)}"#)
    }

    /// Answers request `id` with an error.
    func answer(_ id: JSONValue, code: Int, kind: String, message: String, extra: String = "") {
        send(#"{"jsonrpc":"2.0","id":\#(Self.text(id)),"error":{"code":\#(code),"message":"\#(message)","data":{"kind":"\#(kind)"\#(extra)}}}"#)
    }

    /// Sends a notification.
    func notify(_ method: String, _ params: String) {
        send(#"{"jsonrpc":"2.0","method":"\#(method)","params":\#(params)}"#)
    }

    /// Closes the current connection, as a daemon that crashes or exits would.
    /// Ends the connection as a daemon closing it would: the client sees end of input. The
    /// peer's thread then closes the descriptor and waits for the next client.
    func dropConnection() {
        connection.state.withLockedValue { state in
            if state.fd >= 0 { shutdown(state.fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Stops accepting and drops the connection; the thread closes both descriptors and ends.
    func stop() {
        connection.state.withLockedValue { state in
            state.stopped = true
            if state.fd >= 0 { shutdown(state.fd, Int32(SHUT_RDWR)) }
            // Wakes the thread's `accept` (EINVAL on Linux); it closes the socket itself.
            shutdown(listenFD, Int32(SHUT_RDWR))
        }
        eventSink.finish()
        try? FileManager.default.removeItem(atPath: folder)
    }

    private static func text(_ id: JSONValue) -> String {
        String(decoding: try! JSONEncoder().encode(id), as: UTF8.self)
    }
}

extension AsyncStream<ScriptedPeer.Event>.Iterator {
    /// The next message from the client; fails the test if the client disconnects or the
    /// stream ends first.
    mutating func nextMessage() async throws -> [String: JSONValue] {
        switch await next() {
        case .message(let object)?: return object
        case .connected?: return try await nextMessage()
        case .disconnected?: throw PeerError.disconnected
        case nil: throw PeerError.ended
        }
    }
}

extension AsyncStream<ScriptedPeer.Event>.Iterator {
    /// True when the next event is the client going away (not another message).
    mutating func nextIsDisconnect() async -> Bool {
        if case .disconnected? = await next() { return true }
        return false
    }
}

enum PeerError: Error {
    case disconnected
    case ended
}
