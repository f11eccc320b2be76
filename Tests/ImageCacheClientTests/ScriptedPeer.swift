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
    private final class ConnectionSlot: Sendable {
        let fd = NIOLockedValueBox<Int32>(-1)
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
                if client < 0 { return }
                connection.fd.withLockedValue { $0 = client }
                sink.yield(.connected)
                ScriptedPeer.readLines(fd: client, sink: sink)
            }
        }
        thread.start()
    }

    /// Reads one connection until it ends, reporting each line as a message.
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
        let fd = connection.fd.withLockedValue { $0 }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Answers request `id` with a raw result JSON text.
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
    func dropConnection() {
        let fd = connection.fd.withLockedValue { fd -> Int32 in
            defer { fd = -1 }
            return fd
        }
        if fd >= 0 {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    /// Stops listening and removes the socket and its folder.
    func stop() {
        dropConnection()
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
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
