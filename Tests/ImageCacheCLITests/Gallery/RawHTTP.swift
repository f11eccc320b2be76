import Foundation
import NIOCore
import NIOPosix

/// A deliberately plain HTTP/1.1 and WebSocket client on a real TCP connection to 127.0.0.1:
/// the test writes every header itself (a foreign `Host`, an `Origin`, none at all), which a
/// browser or URLSession would not let it do, and reads the raw answer.
struct RawHTTP {
    /// A parsed answer.
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    typealias Connection = NIOAsyncChannel<ByteBuffer, ByteBuffer>

    static func connect(port: Int) async throws -> Connection {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture { try Connection(wrappingChannelSynchronously: channel) }
            }
    }

    /// `GET path` with exactly `headers` (plus `Connection: close`), the whole answer.
    static func get(port: Int, _ path: String, headers: [(String, String)]) async throws -> Response {
        let connection = try await connect(port: port)
        return try await connection.executeThenClose { inbound, outbound in
            var request = "GET \(path) HTTP/1.1\r\n"
            for (name, value) in headers + [("Connection", "close")] { request += "\(name): \(value)\r\n" }
            try await outbound.write(ByteBuffer(string: request + "\r\n"))
            var bytes: [UInt8] = []
            for try await chunk in inbound { bytes += chunk.readableBytesView }
            return try parse(bytes)
        }
    }

    static func parse(_ bytes: [UInt8]) throws -> Response {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { throw Malformed(text: String(decoding: bytes, as: UTF8.self)) }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = head[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Malformed(text: head[0]) }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: Array(bytes[end.upperBound...]))
    }

    struct Malformed: Error { var text: String }
}

/// A WebSocket session over `RawHTTP`: the upgrade, masked text frames out, text frames in.
final class RawWebSocket {
    private var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var pending: [UInt8] = []

    init(inbound: NIOAsyncChannelInboundStream<ByteBuffer>, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) {
        iterator = inbound.makeAsyncIterator()
        self.outbound = outbound
    }

    /// Sends the upgrade request and returns the answer's head (status 101 when accepted).
    func upgrade(path: String, headers: [(String, String)]) async throws -> RawHTTP.Response {
        var request = "GET \(path) HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try await outbound.write(ByteBuffer(string: request + "\r\n"))
        while pending.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
            guard let chunk = try await iterator.next() else { break }
            pending += chunk.readableBytesView
        }
        guard let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) else { return try RawHTTP.parse(pending) }
        var response = try RawHTTP.parse(Array(pending[..<end.upperBound]))
        pending = Array(pending[end.upperBound...])
        if response.status != 101 {   // a refusal carries a body: read what came
            response.body = pending
        }
        return response
    }

    /// Sends one text frame, masked as a client must.
    func send(_ text: String) async throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame.append(0x80 | 126)
            frame += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try await outbound.write(ByteBuffer(bytes: frame))
    }

    /// The next text frame's text; nil when the connection ended or a close frame came.
    func receive() async throws -> String? {
        while true {
            if let (opcode, payload, used) = Self.frame(in: pending) {
                pending.removeFirst(used)
                if opcode == 0x8 { return nil }
                if opcode == 0x1 { return String(decoding: payload, as: UTF8.self) }
                continue
            }
            guard let chunk = try await iterator.next() else { return nil }
            pending += chunk.readableBytesView
        }
    }

    /// The first whole (unmasked, server-sent) frame in `bytes`.
    static func frame(in bytes: [UInt8]) -> (UInt8, [UInt8], Int)? {
        guard bytes.count >= 2 else { return nil }
        let opcode = bytes[0] & 0x0F
        var length = Int(bytes[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            offset = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard bytes.count >= offset + length else { return nil }
        return (opcode, Array(bytes[offset..<offset + length]), offset + length)
    }
}
