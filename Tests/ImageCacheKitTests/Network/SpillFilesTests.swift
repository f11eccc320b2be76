import Foundation
@testable import ImageCacheKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The spill files large bodies go to: reused, emptied, bounded, and never a file the pool
/// did not make or no longer finds at its path.
@Suite("Network: spill files are reused, emptied and bounded", .timeLimit(.minutes(1)))
struct SpillFilesTests {
    private func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spill-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func inode(_ path: String) -> UInt64? {
        var info = stat()
        return lstat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    private func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
    }

    /// Writes `text` as a body would, then closes the taker's descriptor, as a sink does when
    /// its body is complete.
    private func write(_ file: SpillFiles.File, _ text: String) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { Glibc.write(file.fd, $0.baseAddress!, $0.count) } == bytes.count)
        close(file.fd)
    }

    /// Descriptors this process holds on files in `dir` (other tests' descriptors, in the
    /// same process, lead elsewhere).
    private func openDescriptors(in dir: String) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd))?.hasPrefix(dir + "/") == true
        }.count
    }

    @Test("a file given back is emptied at once and the next body gets the same file, written from its start")
    func reusedAndEmptied() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pool = SpillFiles(directory: dir)
        let first = try #require(pool.take())
        write(first, "a body of some length")
        let made = inode(first.path)
        #expect(pool.giveBack(first.path))
        #expect(size(first.path) == 0)
        #expect(pool.idleCount == 1)
        let second = try #require(pool.take())
        #expect(second.path == first.path)
        #expect(inode(second.path) == made)
        write(second, "short")
        #expect(try String(contentsOfFile: second.path, encoding: .utf8) == "short")
        #expect(pool.giveBack(second.path))
    }

    @Test("at most the idle limit is kept; files given back beyond it are deleted")
    func idleBounded() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pool = SpillFiles(directory: dir, idleLimit: 2)
        let files = try (0..<3).map { _ in try #require(pool.take()) }
        #expect(Set(files.map(\.path)).count == 3)
        for file in files {
            write(file, "body")
            pool.giveBack(file.path)
        }
        #expect(pool.idleCount == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).count == 2)
        #expect(!FileManager.default.fileExists(atPath: files[2].path))
    }

    @Test("a path the pool did not hand out is left alone")
    func foreignPathUntouched() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pool = SpillFiles(directory: dir)
        let foreign = dir + "/download.part"
        try "resumable".write(toFile: foreign, atomically: false, encoding: .utf8)
        #expect(!pool.giveBack(foreign))
        #expect(try String(contentsOfFile: foreign, encoding: .utf8) == "resumable")
        #expect(pool.idleCount == 0)
    }

    @Test("an idle file whose path now leads elsewhere is dropped, and what is at the path is not touched")
    func replacedPathNeverWritten() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pool = SpillFiles(directory: dir)
        let kept = try #require(pool.take())
        write(kept, "a body")
        pool.giveBack(kept.path)
        // Something else now lives at the kept file's name (the folder was emptied from outside).
        #expect(unlink(kept.path) == 0)
        try "someone else's".write(toFile: kept.path, atomically: false, encoding: .utf8)
        let next = try #require(pool.take())
        #expect(next.path != kept.path)
        #expect(pool.idleCount == 0)
        write(next, "a body")
        #expect(try String(contentsOfFile: kept.path, encoding: .utf8) == "someone else's")
        pool.giveBack(next.path)
    }

    @Test("after close the idle files are deleted, files still out are deleted when given back, and none is made")
    func closeDeletes() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pool = SpillFiles(directory: dir)
        let idle = try #require(pool.take())
        let out = try #require(pool.take())
        write(idle, "processed")
        write(out, "still being read")
        pool.giveBack(idle.path)
        pool.close()
        #expect(!FileManager.default.fileExists(atPath: idle.path))
        #expect(FileManager.default.fileExists(atPath: out.path))
        #expect(pool.giveBack(out.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        #expect(pool.take() == nil)
    }

    @Test("a complete body holds no descriptor: only idle files keep theirs, up to the limit")
    func descriptorsBounded() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pool = SpillFiles(directory: dir, idleLimit: 1)
        let bodies = try (0..<8).map { _ in try #require(pool.take()) }
        #expect(openDescriptors(in: dir) == 8)
        for body in bodies { write(body, "waiting for its decode") }
        #expect(openDescriptors(in: dir) == 0)
        for body in bodies { pool.giveBack(body.path) }
        #expect(openDescriptors(in: dir) == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).count == 1)
        pool.close()
        #expect(openDescriptors(in: dir) == 0)
    }

    @Test("a file given back whose path now holds another file is not emptied")
    func givenBackReplacedUntouched() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pool = SpillFiles(directory: dir)
        let body = try #require(pool.take())
        write(body, "a body")
        #expect(unlink(body.path) == 0)
        try "someone else's".write(toFile: body.path, atomically: false, encoding: .utf8)
        #expect(pool.giveBack(body.path))
        #expect(pool.idleCount == 0)
        #expect(try String(contentsOfFile: body.path, encoding: .utf8) == "someone else's")
    }

    @Test("a file that cannot be made reports why (its folder is gone)")
    func uncreatable() {
        let pool = SpillFiles(directory: "/nonexistent-imagecached-\(UUID().uuidString)")
        #expect(pool.take() == nil)
        #expect(errno == ENOENT)
    }
}
