import Foundation
import NIOCore
import NIOPosix

/// One TCP connection to the server under test, written and read as raw bytes: a test sees
/// exactly what the server sent, on which connection, and when it closed.
final class RawConnection {
    /// One response as it came off the wire (framed by its Content-Length).
    struct Response {
        var status: Int
        /// Header names lowercased.
        var headers: [String: String]
        var body: [UInt8]
    }

    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var pending: [UInt8] = []

    private init(inbound: NIOAsyncChannelInboundStream<ByteBuffer>, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) {
        self.inbound = inbound.makeAsyncIterator()
        self.outbound = outbound
    }

    /// Connects to 127.0.0.1:`port`, runs `body`, closes.
    static func with<T: Sendable>(port: Int, _ body: (RawConnection) async throws -> T) async throws -> T {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(RawConnection(inbound: inbound, outbound: outbound))
        }
    }

    /// Sends `text` as it is (CRLFs written out by the caller).
    func send(_ text: String) async throws {
        try await outbound.write(ByteBuffer(string: text))
    }

    /// Reads one response; nil when the server closed first. `toHEAD`: the answer to a `HEAD`,
    /// whose Content-Length counts a body that is not sent.
    func response(toHEAD: Bool = false) async throws -> Response? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while true {
            if headEnd == nil, let end = Self.find(separator, in: pending) { headEnd = end }
            if let end = headEnd {
                let lines = String(decoding: pending[..<end], as: UTF8.self).components(separatedBy: "\r\n")
                let status = Int(lines[0].split(separator: " ")[1]) ?? 0
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = toHEAD ? 0 : Int(headers["content-length"] ?? "0") ?? 0
                let bodyStart = end + separator.count
                if pending.count >= bodyStart + length {
                    let body = Array(pending[bodyStart..<bodyStart + length])
                    pending.removeFirst(bodyStart + length)
                    return Response(status: status, headers: headers, body: body)
                }
            }
            guard let more = try await inbound.next() else { return nil }
            pending += Array(more.readableBytesView)
        }
    }

    /// Waits for the first bytes the server sends (nil: it closed without any).
    func receivedSome() async throws -> [UInt8]? {
        if !pending.isEmpty { return pending }
        guard let more = try await inbound.next() else { return nil }
        pending += Array(more.readableBytesView)
        return pending
    }

    /// Reads until the server closes; the bytes it sent meanwhile (empty: a clean close).
    func untilClosed() async throws -> [UInt8] {
        while let more = try await inbound.next() { pending += Array(more.readableBytesView) }
        defer { pending = [] }
        return pending
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
