import NIOCore
import Testing
@testable import MemcachedMeta

@Suite("memcached meta: hashing, keys and answer parsing", .timeLimit(.minutes(1)))
struct HashingTests {
    @Test("MD5 gives RFC 1321's test-suite digests")
    func md5Vectors() {
        #expect(MD5.hex(Array("".utf8)) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(MD5.hex(Array("abc".utf8)) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(MD5.hex(Array("message digest".utf8)) == "f96b697d7cb7938d525a2f31aaf161d0")
        #expect(MD5.hex(Array(String(repeating: "1234567890", count: 8).utf8)) == "57edf4a22be3c955ac49da2e2107b67a")
    }

    @Test("ketama spreads keys over three nodes, and removing one moves only its keys")
    func ketamaSpreadAndStability() {
        let three = KetamaRing(nodes: ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"])
        let two = KetamaRing(nodes: ["10.0.0.1:11211", "10.0.0.2:11211"])
        var counts = [0, 0, 0]
        var moved = 0
        let keys = (0..<9000).map { "thumb:https://example.com/photo/\($0).jpg:400" }
        for key in keys {
            let bytes = Array(key.utf8)
            let node = three.node(for: bytes)!
            counts[node] += 1
            if node != 2 && two.node(for: bytes) != node { moved += 1 }
        }
        for count in counts { #expect(count > 9000 / 5 && count < 9000 / 2, "\(counts)") }
        #expect(moved == 0)
        #expect(KetamaRing(nodes: []).node(for: [1, 2, 3]) == nil)
        // The list's order does not matter: every host agrees.
        let shuffled = KetamaRing(nodes: ["10.0.0.3:11211", "10.0.0.1:11211", "10.0.0.2:11211"])
        let names = ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"], shuffledNames = ["10.0.0.3:11211", "10.0.0.1:11211", "10.0.0.2:11211"]
        for key in keys.prefix(500) {
            #expect(names[three.node(for: Array(key.utf8))!] == shuffledNames[shuffled.node(for: Array(key.utf8))!])
        }
    }

    @Test("keys memcached cannot take are hashed; plain ones pass as they are")
    func keys() {
        #expect(MetaKey.wire("t1:abc", prefix: "fleet:") == "fleet:t1:abc")
        let long = MetaKey.wire("t1:https://example.com/" + String(repeating: "x", count: 300), prefix: "fleet:")
        #expect(long.hasPrefix("fleet:#") && long.utf8.count == 6 + 33)
        let spaced = MetaKey.wire("a b", prefix: "")
        #expect(spaced.hasPrefix("#") && MetaKey.isPlain(spaced.utf8))
        #expect(MetaKey.wire("é", prefix: "p:") != MetaKey.wire("e", prefix: "p:"))
        #expect(MetaCommand.seconds(.milliseconds(1)) == 1)
        #expect(MetaCommand.seconds(.seconds(-5)) == 1)
        #expect(MetaCommand.seconds(.seconds(Int64.max)) == MetaCommand.maximumTTL)
        #expect(MetaCommand.seconds(.milliseconds(2500)) == 3)
    }

    @Test("answers split at their ends; a value waits for its whole block; hostile answers are refused")
    func parsing() throws {
        func parse(_ text: String, max: Int = 1 << 20) throws -> (MetaResponse?, Int) {
            var buffer = ByteBuffer(string: text)
            let response = try MetaResponseDecoder.parse(&buffer, maxLineBytes: 4096, maxValueBytes: max)
            return (response, buffer.readableBytes)
        }
        #expect(try parse("HD\r\nEN\r\n").0 == MetaResponse(status: .done))
        #expect(try parse("HD\r\nEN\r\n").1 == 4)
        let claim = try parse("VA 0 t-1 W\r\n\r\n").0
        #expect(claim?.status == .value && claim?.has("W") == true && claim?.value == [])
        #expect(try parse("VA 3 t60\r\nabc\r\n").0?.value == Array("abc".utf8))
        #expect(try parse("VA 3 t60\r\nab").0 == nil)
        #expect(try parse("VA 3 t60\r\nab").1 == 12)
        #expect(try parse("HD").0 == nil)
        #expect(try parse("SERVER_ERROR object too large for cache\r\n").0?.status == .serverError("object too large for cache"))
        #expect(throws: (any Error).self) { try parse("VA 3 t60\r\nabcde\r\n") }
        #expect(throws: (any Error).self) { try parse("VA 99999999999999999999 t\r\n") }
        #expect(throws: (any Error).self) { try parse("VA -1\r\n") }
        #expect(throws: (any Error).self) { try parse("VA 2000\r\n", max: 1000) }
        #expect(throws: (any Error).self) { try parse("WAT\r\n") }
        #expect(throws: (any Error).self) { try parse(String(repeating: "x", count: 5000)) }
    }
}
