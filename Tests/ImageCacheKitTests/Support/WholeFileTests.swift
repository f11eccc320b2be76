import Foundation
@testable import ImageCacheKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Reading (or mapping) a whole file the engine wrote: every byte, never through a symlink,
/// errors with their errno.
@Suite("Support: a whole file read back", .timeLimit(.minutes(1)))
struct WholeFileTests {
    /// The two ways to the bytes: read into an array, and mapped for a call.
    enum Way: CaseIterable, Sendable {
        case read, mapped

        func bytes(_ path: String) throws -> [UInt8] {
            switch self {
            case .read: return try WholeFile.read(path, what: "the body")
            case .mapped: return try WholeFile.withMapped(path, what: "the body") { [UInt8]($0) }
            }
        }
    }

    private func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("whole-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a file of several megabytes, an empty one and a one-byte one come back byte for byte", arguments: Way.allCases)
    func everyByte(way: Way) throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var generator = SystemRandomNumberGenerator()
        for count in [0, 1, 3 << 20 | 17] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let path = dir + "/body-\(count)"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(try way.bytes(path) == bytes)
        }
    }

    @Test("a folder at the name is refused with its errno: read says it cannot read it, the map that it cannot map it")
    func folderRefused() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(throws: StorageError("cannot read the body \(dir)", errno: EISDIR)) { try WholeFile.read(dir, what: "the body") }
        #expect(throws: StorageError("cannot map the body \(dir)", errno: ENODEV)) {
            try WholeFile.withMapped(dir, what: "the body") { _ in }
        }
    }

    @Test("a symlink at the name is refused, and a missing file says so with its errno's kind", arguments: Way.allCases)
    func refusals(way: Way) throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: dir + "/target"))
        #expect(symlink(dir + "/target", dir + "/link") == 0)
        do {
            _ = try way.bytes(dir + "/link")
            Issue.record("a symlink was followed")
        } catch let error as StorageError {
            #expect(error.code == ELOOP)
        }
        do {
            _ = try way.bytes(dir + "/missing")
            Issue.record("a missing file was read")
        } catch let error as StorageError {
            #expect(error.code == ENOENT)
            #expect(error.what.contains("cannot read the body"))
            #expect(error.kind == .storageUnavailable)
        }
    }
}
