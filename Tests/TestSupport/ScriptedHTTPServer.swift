import Foundation
import ImageCacheSupport
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on 127.0.0.1, written on raw sockets, that answers each request with
/// exactly the bytes its script gives: what no server library would send (a `204` followed by
/// a body, an HTTP/0.9 reply, a broken chunk, nothing at all). It counts connections and
/// requests, so a test sees whether a client kept using a connection after such an answer.
///
/// The n-th request (from 0, over every connection) gets the n-th answer; past the end of the
/// script, the last one again. A listener thread accepts, a thread per connection reads request
/// heads (GETs carry no body) and writes answers. Only those threads close descriptors, under
/// the lock that `stop()` takes to shut them down, so no descriptor number is touched after its
/// close (another test's socket may have it by then).
public final class ScriptedHTTPServer: Sendable {
    /// One scripted answer.
    public struct Answer: Sendable {
        /// Written as soon as the request's head has been read.
        public var bytes: [UInt8]
        /// Written on the same connection just before the answer to its next request: bytes a
        /// host sent past the end of this answer, found by a client that reuses the connection.
        /// Sending them then rather than at once makes the test deterministic, and is the case a
        /// client's check for pending input, made when it picks the connection, cannot see.
        public var leftover: [UInt8]
        /// Close the connection once `bytes` are written.
        public var close: Bool

        /// An answer of these bytes, and what follows it on the connection.
        public init(_ bytes: [UInt8], leftover: [UInt8] = [], close: Bool = false) {
            self.bytes = bytes
            self.leftover = leftover
            self.close = close
        }

        /// An answer of this text (CRLFs written out), and what follows it on the connection.
        public static func raw(_ text: String, leftover: String = "", close: Bool = false) -> Answer {
            Answer(Array(text.utf8), leftover: Array(leftover.utf8), close: close)
        }

        /// A well-formed `200` with `body`, kept alive.
        public static func ok(_ body: [UInt8], contentType: String = "image/jpeg", leftover: String = "") -> Answer {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n\r\n"
            return Answer(Array(head.utf8) + body, leftover: Array(leftover.utf8))
        }
    }

    private struct State {
        var requests = 0
        var connections = 0
        var open: Set<Int32> = []
        var listening = true
        var stopped = false
    }

    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let script: [Answer]
    private let state = LockedState(State())

    /// Starts listening and answering with `script` (at least one answer).
    public init(script: [Answer]) throws {
        precondition(!script.isEmpty, "a script needs an answer")
        (listener, port) = try bindLoopbackTCP()
        self.script = script
        guard listen(listener, 16) == 0 else {
            let code = errno
            close(listener)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "scripted-http-accept"
        thread.start()
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Request heads read so far.
    public var requests: Int { state.withLock { $0.requests } }

    /// Connections accepted so far.
    public var connections: Int { state.withLock { $0.connections } }

    /// Stops accepting and ends every connection (their threads close them). Call it once done:
    /// the threads keep the server alive until then.
    public func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            if state.listening { shutdown(listener, Int32(SHUT_RDWR)) }
            for fd in state.open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            let failure = fd < 0 ? errno : 0
            if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            let taken = state.withLock { state -> Bool in
                guard fd >= 0, !state.stopped else { return false }
                state.connections += 1
                state.open.insert(fd)
                return true
            }
            guard taken else {
                if fd >= 0 { close(fd) }
                if failure == EINTR || failure == ECONNABORTED, !state.withLock({ $0.stopped }) { continue }
                break
            }
            let thread = Thread { [self] in serve(fd) }
            thread.name = "scripted-http-connection"
            thread.start()
        }
        state.withLock { state in
            state.listening = false
            close(listener)
        }
    }

    /// Answers request after request on one connection until either side ends it.
    private func serve(_ fd: Int32) {
        var pending: [UInt8] = []
        var leftover: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        loop: while true {
            // One request head.
            while Self.headEnd(in: pending) == nil {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break loop }
                pending += buffer[..<count]
            }
            pending.removeSubrange(..<Self.headEnd(in: pending)!)
            let answer = state.withLock { state -> Answer in
                state.requests += 1
                return script[min(state.requests - 1, script.count - 1)]
            }
            guard Self.write(leftover + answer.bytes, to: fd) else { break }
            leftover = answer.leftover
            if answer.close { break }
        }
        state.withLock { state in
            state.open.remove(fd)
            close(fd)
        }
    }

    /// The index just past the first blank line ending a head, if `bytes` hold one.
    private static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index - 3] == 0x0D && bytes[index - 2] == 0x0A && bytes[index - 1] == 0x0D && bytes[index] == 0x0A {
            return index + 1
        }
        return nil
    }

    /// Writes all of `bytes`; false when the peer has gone.
    private static func write(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}
