import Foundation
import ImageCacheProtocol
import NIOCore
import Testing
@testable import ImageCacheServer

/// Inputs the `json-line` fuzz target (JSONLineParser against JSONDecoder) found, kept in
/// `Inputs/` beside this file.
@Suite("Fuzz regressions: request lines", .timeLimit(.minutes(1)))
struct JSONLineFuzzRegressionTests {
    static func input(_ name: String) throws -> [UInt8] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Inputs")
        return [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    @Test("digits below Int.min are a double, as JSONDecoder reads them, never Int.min")
    func belowIntMin() throws {
        let bytes = try Self.input("json-line-below-int-min")
        #expect(String(decoding: bytes, as: UTF8.self) == "-9223372036854775809")
        let ours = try bytes.withUnsafeBytes { try JSONLineParser.parse($0) }
        let reference = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        #expect(ours == reference)
        #expect(ours == .double(-9_223_372_036_854_775_808.0))
        // As a request id: refused, where it was echoed back as another id before.
        let line = #"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"hello"}"#
        guard case .failure(let failure)? = IncomingMessageParser.parse(ByteBuffer(string: line)) else {
            Issue.record("an id below Int.min was accepted")
            return
        }
        #expect(failure.error.data.kind == .invalidRequest)
        #expect(failure.id == nil)
    }

    @Test("a NUL byte before the value is refused, as RFC 8259 says, where JSONDecoder reads past it")
    func leadingNUL() throws {
        let bytes = try Self.input("json-line-leading-nul")
        #expect(bytes == [0x00, 0x32])
        #expect(throws: (any Error).self) { _ = try bytes.withUnsafeBytes { try JSONLineParser.parse($0) } }
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == .int(2))
    }

    @Test("a NUL after the value is refused, where JSONDecoder reads no further than the NUL")
    func textAfterNUL() throws {
        let bytes = try Self.input("json-line-text-after-nul")
        #expect(bytes == [0x31, 0x00, 0x00, 0x00, 0x07, 0x34, 0x30])
        #expect(throws: (any Error).self) { _ = try bytes.withUnsafeBytes { try JSONLineParser.parse($0) } }
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == .int(1))
        let line = #"{"jsonrpc":"2.0","id":1,"method":"hello"}"# + "\u{0}\u{7}trailing"
        guard case .failure(let failure)? = IncomingMessageParser.parse(ByteBuffer(string: line)) else {
            Issue.record("a request line with bytes after a NUL was accepted")
            return
        }
        #expect(failure.error.data.kind == .parseError)
    }

    @Test("a number with a leading zero (a Pixabay answer's \"likes\": 0613) is refused, as RFC 8259 says, where JSONDecoder reads it")
    func leadingZero() throws {
        let bytes = try Self.input("json-line-leading-zero")
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"likes\": 0613,"))
        #expect(throws: (any Error).self) { _ = try bytes.withUnsafeBytes { try JSONLineParser.parse($0) } }
        #expect((try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) != nil)
        for text in ["0613", "-01", "[00]", #"{"id":01}"#] {
            #expect(throws: (any Error).self, "\(text)") { _ = try Array(text.utf8).withUnsafeBytes { try JSONLineParser.parse($0) } }
        }
        for text in ["0", "-0", "0.5", "10", "1e-01", "[0,0]"] {
            #expect((try? Array(text.utf8).withUnsafeBytes { try JSONLineParser.parse($0) }) != nil, "\(text)")
        }
        guard case .failure(let failure)? = IncomingMessageParser.parse(ByteBuffer(string: #"{"jsonrpc":"2.0","id":01,"method":"hello"}"#)) else {
            Issue.record("a request id written 01 was accepted")
            return
        }
        #expect(failure.error.data.kind == .parseError)
    }

    @Test("an invalid escape in a repeated key's dropped value is refused, where JSONDecoder never reads that value")
    func badEscapeInRepeatedKey() throws {
        let bytes = try Self.input("json-line-bad-escape-in-repeated-key")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.components(separatedBy: "\"trace\":").count == 3 && text.contains(#"\in `call"#))
        #expect(throws: (any Error).self) { _ = try bytes.withUnsafeBytes { try JSONLineParser.parse($0) } }
        #expect((try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) != nil)
        let small = #"{"a":"x","a":"\q"}"#
        #expect(throws: (any Error).self) { _ = try Array(small.utf8).withUnsafeBytes { try JSONLineParser.parse($0) } }
        #expect(try Array(#"{"a":"x","a":"y"}"#.utf8).withUnsafeBytes { try JSONLineParser.parse($0) } == .object(["a": .string("x")]))
    }

    @Test("a lone surrogate escape in a repeated key's dropped value is refused, as everywhere else")
    func loneSurrogateInRepeatedKey() throws {
        let bytes = try Self.input("json-line-lone-surrogate-in-repeated-key")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#"gemsd83d\ude00ddleware"#))
        #expect(throws: (any Error).self) { _ = try bytes.withUnsafeBytes { try JSONLineParser.parse($0) } }
        #expect((try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) != nil)
        #expect(try Array(#"{"a":"\ud83d\ude00"}"#.utf8).withUnsafeBytes { try JSONLineParser.parse($0) } == .object(["a": .string("😀")]))
    }

    @Test("text JSONDecoder reads as UTF-32 (three NULs, then \"1\") is refused: a request line is UTF-8")
    func utf32() throws {
        let bytes = try Self.input("json-line-utf32-be")
        #expect(bytes == [0x00, 0x00, 0x00, 0x31, 0x3A])
        #expect(throws: (any Error).self) { _ = try bytes.withUnsafeBytes { try JSONLineParser.parse($0) } }
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == .int(1))
        let utf16 = Array(#"{"a":1}"#.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        #expect(throws: (any Error).self) { _ = try utf16.withUnsafeBytes { try JSONLineParser.parse($0) } }
    }

    @Test("integral numbers written with a fraction or exponent stay ints where they fit",
          arguments: ["1.0", "1e2", "-9223372036854775808", "9223372036854775807", "-12.0e1"])
    func integralForms(_ text: String) throws {
        let ours = try Array(text.utf8).withUnsafeBytes { try JSONLineParser.parse($0) }
        #expect(ours == (try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))))
        guard case .int = ours else {
            Issue.record("\(text) read as \(ours)")
            return
        }
    }

    @Test("a whole number past 2^53 written with a fraction is read exactly, not through a Double (an odd id stays odd)")
    func wholeNumberPast2To53() throws {
        let bytes = try Self.input("json-line-whole-number-past-2-53")
        #expect(String(decoding: bytes, as: UTF8.self) == "9223372036854771.0")
        let ours = try bytes.withUnsafeBytes { try JSONLineParser.parse($0) }
        #expect(ours == .int(9_223_372_036_854_771))
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == ours)
        // As a request id, echoed as sent.
        let line = #"{"jsonrpc":"2.0","id":9223372036854771.0,"method":"hello"}"#
        guard case .success(.request(let id, _, _))? = IncomingMessageParser.parse(ByteBuffer(string: line)) else {
            Issue.record("the request was not read")
            return
        }
        #expect(id == .int(9_223_372_036_854_771))
    }

    @Test("numbers with a fraction or an exponent: their exact value decides int or double", arguments: [
        ("922337203685477.1e1", JSONValue.int(9_223_372_036_854_771)), ("92233720368547710e-1", .int(9_223_372_036_854_771)),
        ("-9223372036854775808.000", .int(Int.min)), ("9223372036854775807.0", .int(Int.max)),
        ("9223372036854775808.0", .double(9_223_372_036_854_775_808.0)), ("100e-2", .int(1)), ("0.0e99999999999999999999", .int(0)),
        ("-0.0", .int(0)), ("1.5e1", .int(15)), ("0.05", .double(0.05)), ("9223372036854771.5", .double(9_223_372_036_854_772.0)),
        ("1e19", .double(1e19)), ("1e-99999999999999999999", .double(0)), ("12.5e-1", .double(1.25)),
    ])
    func exactValues(_ text: String, _ expected: JSONValue) throws {
        let ours = try Array(text.utf8).withUnsafeBytes { try JSONLineParser.parse($0) }
        #expect(ours == expected)
    }

    @Test("a number past Double's range is still refused")
    func pastDouble() {
        #expect(throws: (any Error).self) { _ = try Array("1e400".utf8).withUnsafeBytes { try JSONLineParser.parse($0) } }
        #expect(throws: (any Error).self) { _ = try Array("-1.5e99999999999".utf8).withUnsafeBytes { try JSONLineParser.parse($0) } }
    }

    @Test("a number too small for a double is not whole: 0.0, where JSONDecoder reads the int 0; as an id it is refused")
    func underflowToZero() throws {
        let bytes = try Self.input("json-line-underflow-to-zero")
        #expect(String(decoding: bytes, as: UTF8.self) == "1E-9223372038")
        #expect(try bytes.withUnsafeBytes { try JSONLineParser.parse($0) } == .double(0))
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == .int(0))
        let line = #"{"jsonrpc":"2.0","id":1E-9223372038,"method":"hello"}"#
        guard case .failure(let failure)? = IncomingMessageParser.parse(ByteBuffer(string: line)) else {
            Issue.record("an id that is not a whole number was accepted")
            return
        }
        #expect(failure.error.data.kind == .invalidRequest)
    }

    @Test("a number past 2^53 with a fraction is the nearest double, where JSONDecoder cuts the fraction off into an int")
    func fractionPast2To53() throws {
        let bytes = try Self.input("json-line-fraction-past-2-53")
        #expect(String(decoding: bytes, as: UTF8.self) == "\r9223372036854077.58800")
        #expect(try bytes.withUnsafeBytes { try JSONLineParser.parse($0) } == .double(9_223_372_036_854_077.588))
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == .int(9_223_372_036_854_077))
    }
}
