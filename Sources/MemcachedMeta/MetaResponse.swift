import NIOCore

/// One meta-protocol answer.
public struct MetaResponse: Sendable, Equatable {
    /// The two-letter code (or the error line's kind).
    public enum Status: Sendable, Equatable {
        /// `VA`: a value follows.
        case value
        /// `HD`: done, no value.
        case done
        /// `EN`: not found (`mg`).
        case notFound
        /// `NF`: not found (`md`, `ma`).
        case noSuchItem
        /// `NS`: not stored.
        case notStored
        /// `EX`: exists (a CAS mismatch).
        case exists
        /// `MN`: the answer to `mn`.
        case noop
        /// `SERVER_ERROR …` (e.g. "object too large for cache", "out of memory").
        case serverError(String)
        /// `CLIENT_ERROR …` or `ERROR`: the server did not understand the request.
        case clientError(String)
    }

    public var status: Status
    /// The flags returned (`W`, `Z`, `X`, `t…`), letter → token (empty for bare flags).
    public var flags: [UInt8: String]
    /// The value of a `VA`.
    public var value: [UInt8]?

    public init(status: Status, flags: [UInt8: String] = [:], value: [UInt8]? = nil) {
        self.status = status
        self.flags = flags
        self.value = value
    }

    /// Whether a flag was returned.
    public func has(_ flag: Character) -> Bool {
        guard let ascii = flag.asciiValue else { return false }
        return flags[ascii] != nil
    }
}

/// Splits the server's byte stream into answers: a line, and for `VA` the value block after it.
///
/// The server is outside input too: a line longer than `maxLineBytes` or a value longer than
/// `maxValueBytes` (or a malformed size) is an error that closes the connection, never an
/// allocation of whatever size it claims.
struct MetaResponseDecoder: ByteToMessageDecoder {
    typealias InboundOut = MetaResponse

    var maxLineBytes = 4096
    var maxValueBytes: Int

    enum Failure: Error { case lineTooLong, malformed(String), valueTooLarge }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let response = try Self.parse(&buffer, maxLineBytes: maxLineBytes, maxValueBytes: maxValueBytes) else {
            return .needMoreData
        }
        context.fireChannelRead(wrapInboundOut(response))
        return .continue
    }

    /// One answer from the front of `buffer` (consumed), or nil when it is not complete yet.
    static func parse(_ buffer: inout ByteBuffer, maxLineBytes: Int, maxValueBytes: Int) throws -> MetaResponse? {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if view.count > maxLineBytes { throw Failure.lineTooLong }
            return nil
        }
        let lineLength = newline - view.startIndex
        guard lineLength <= maxLineBytes, lineLength >= 1, view[newline - 1] == UInt8(ascii: "\r") else {
            throw Failure.malformed("line")
        }
        let line = Array(view[view.startIndex..<(newline - 1)])
        let tokens = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard let code = tokens.first else { throw Failure.malformed("empty line") }
        let text = String(decoding: line, as: UTF8.self)
        func flags(from index: Int) -> [UInt8: String] {
            var flags: [UInt8: String] = [:]
            for token in tokens.dropFirst(index) {
                guard let letter = token.first else { continue }
                flags[letter] = String(decoding: token.dropFirst(), as: UTF8.self)
            }
            return flags
        }
        let status: MetaResponse.Status
        switch String(decoding: code, as: UTF8.self) {
        case "VA":
            guard tokens.count >= 2, tokens[1].count <= 10,
                  let size = Int(String(decoding: tokens[1], as: UTF8.self)), size >= 0 else {
                throw Failure.malformed("value size")
            }
            guard size <= maxValueBytes else { throw Failure.valueTooLarge }
            let needed = lineLength + 1 + size + 2
            guard view.count >= needed else { return nil }
            let valueStart = view.startIndex + lineLength + 1
            guard view[valueStart + size] == UInt8(ascii: "\r"), view[valueStart + size + 1] == UInt8(ascii: "\n") else {
                throw Failure.malformed("value block")
            }
            // One copy (memcpy), not an element-by-element walk of the view.
            let value = buffer.getBytes(at: buffer.readerIndex + lineLength + 1, length: size) ?? []
            let response = MetaResponse(status: .value, flags: flags(from: 2), value: value)
            buffer.moveReaderIndex(forwardBy: needed)
            return response
        case "HD": status = .done
        case "EN": status = .notFound
        case "NF": status = .noSuchItem
        case "NS": status = .notStored
        case "EX": status = .exists
        case "MN": status = .noop
        case "SERVER_ERROR": status = .serverError(String(text.dropFirst(13)))
        case "CLIENT_ERROR": status = .clientError(String(text.dropFirst(13)))
        case "ERROR": status = .clientError("ERROR")
        default: throw Failure.malformed("unknown answer")
        }
        buffer.moveReaderIndex(forwardBy: lineLength + 1)
        return MetaResponse(status: status, flags: flags(from: 1))
    }
}
