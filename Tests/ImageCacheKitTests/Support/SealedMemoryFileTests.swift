import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing

/// The sealed memory files hot inline thumbnails are sent from: what goes in comes back,
/// nothing can change it afterwards, and past the descriptor budget none is made.
@Suite("Sealed memory files", .timeLimit(.minutes(1)))
struct SealedMemoryFileTests {
    @Test("holds exactly the bytes it was made from, sealed against writes and resizing")
    func sealed() throws {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let file = try #require(SealedMemoryFile.make(bytes))
        #expect(file.count == bytes.count)
        #expect(file.contents() == bytes)
        #expect(file.isSealed)
        // Neither the content nor the size can change, from this process or any other that
        // got the descriptor.
        let wrote = [UInt8(1)].withUnsafeBytes { pwrite(file.descriptor, $0.baseAddress, 1, 0) }
        let writeError = errno
        #expect(wrote == -1 && writeError == EPERM)
        #expect(ftruncate(file.descriptor, 10) == -1)
        #expect(file.contents() == bytes)
    }

    @Test("an empty file is a file too")
    func empty() throws {
        let file = try #require(SealedMemoryFile.make([UInt8]()))
        #expect(file.count == 0)
        #expect(file.contents().isEmpty)
    }

    @Test("past the descriptor budget none is made, and the text stays a string")
    func budgetSpent() throws {
        #expect(SealedMemoryFile.make([1, 2, 3], budget: 0) == nil)
        #expect(InlineBase64.make("QUJD", budget: 0) == .text("QUJD"))
        #expect(SealedMemoryFile.budget > 0)
        switch InlineBase64.make("QUJD") {
        case .lineEnd(let file):
            #expect(file.contents() == Array("QUJD".utf8) + ThumbnailShowResult.lineEndAfterData)
            #expect(InlineBase64.lineEnd(file).string == "QUJD")
        case .text:
            Issue.record("a file could be made: the budget is not spent here")
        }
        #expect(InlineBase64.text("QUJD").string == "QUJD")
        #expect(InlineBase64.text("QUJD").count == 4)
    }
}
