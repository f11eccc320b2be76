import Foundation
import ImageCacheProtocol
import Testing
@testable import ImageCacheServer

/// The hand parser of request lines gives what `JSONDecoder` gave before it (the reference it
/// replaced for speed): the same value for every valid line, an error for every invalid one.
@Suite("Request lines: the JSON parser agrees with JSONDecoder", .timeLimit(.minutes(1)))
struct JSONLineParserTests {
    static let agreeing: [String] = [
        #"{"jsonrpc":"2.0","id":7,"method":"thumbnail.show","params":{"slot":3,"photo":"unsplash:a","size":256}}"#,
        #"  { "a" : [ 1 , 2.5 , -3 , true , false , null , "x" ] }  "#,
        "{}", "[]", "[[[]]]", #""plain""#, "0", "-0", "1.0", "1e2", "0.1e1", "-1.0e0", "1.5", "-2.25E-3",
        "12345678901234567890", "-9223372036854775808", "9223372036854775807", "9223372036854775808",
        #""\ud83d\ude00 \u00e9 \" \\ \/ \b \f \n \r \t""#, #""é and 日本 and 🇫🇷""#, #"{"a":1,"a":2}"#,
        #"{"k":{"nested":{"deeper":[{"x":null}]}}}"#, "true", "false", "null", "\t{\r\n}\n",
    ]

    static let malformed: [String] = [
        "", "{", "}", "{\"a\" 1}", "{a:1}", "01", "-", "1.", ".5", "1e", "+1", "1E400",
        "NaN", "Infinity", "tru", "nul", "\"unterminated", #""\x""#, #""\u12""#, #""\ud800""#, #""\udc00""#,
        #""\ud800\u0041""#, "{} {}", "[1] x", "\"a\u{01}b\"", "'single'",
    ]

    @Test("valid lines: the same value", arguments: agreeing)
    func sameValue(_ line: String) throws {
        let reference = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
        let parsed = try Array(line.utf8).withUnsafeBytes { raw in try JSONLineParser.parse(raw) }
        #expect(parsed == reference)
    }

    @Test("invalid lines: both refuse", arguments: malformed)
    func bothRefuse(_ line: String) {
        #expect((try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))) == nil)
        #expect(throws: JSONLineParser.Malformed.self) {
            _ = try Array(line.utf8).withUnsafeBytes { raw in try JSONLineParser.parse(raw) }
        }
    }

    @Test("a trailing comma is refused: RFC 8259 has none (JSONDecoder lets it pass)",
          arguments: ["[1,]", #"{"a":1,}"#, #"{"jsonrpc":"2.0","id":1,"method":"hello",}"#])
    func trailingComma(_ line: String) {
        #expect(throws: JSONLineParser.Malformed.self) {
            _ = try Array(line.utf8).withUnsafeBytes { raw in try JSONLineParser.parse(raw) }
        }
    }

    @Test("bytes that are not UTF-8 inside a string are refused, as JSONDecoder refuses them")
    func invalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0x5C, 0x6E, 0xED, 0xA0, 0x80, 0x22]] {
            #expect((try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) == nil)
            #expect(throws: JSONLineParser.Malformed.self) {
                _ = try bytes.withUnsafeBytes { raw in try JSONLineParser.parse(raw) }
            }
        }
    }
}
