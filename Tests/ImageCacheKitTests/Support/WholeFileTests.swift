import Foundation
@testable import ImageCacheKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Reading a whole file the engine wrote: every byte, never through a symlink, errors with
/// their errno.
@Suite("Support: a whole file read back", .timeLimit(.minutes(1)))
struct WholeFileTests {
    private func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("whole-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a file of several megabytes, an empty one and a one-byte one come back byte for byte")
    func everyByte() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var generator = SystemRandomNumberGenerator()
        for count in [0, 1, 3 << 20 | 17] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let path = dir + "/body-\(count)"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(try WholeFile.read(path, what: "the body") == bytes)
        }
    }

    @Test("a symlink at the name is refused, and a missing file says so with its errno's kind")
    func refusals() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: dir + "/target"))
        #expect(symlink(dir + "/target", dir + "/link") == 0)
        #expect(throws: StorageError.self) { try WholeFile.read(dir + "/link", what: "the body") }
        do {
            _ = try WholeFile.read(dir + "/missing", what: "the body")
            Issue.record("a missing file was read")
        } catch {
            #expect(error.code == ENOENT)
            #expect(error.what.contains("cannot read the body"))
            #expect(error.kind == .storageUnavailable)
        }
    }
}
