import Foundation
import Testing
import TestSupport

/// The test helper that waits for a file to grow (a download's `.part`) wakes on the write and
/// ends at once when its task is cancelled.
@Suite("Test support: waiting for a file to grow", .timeLimit(.minutes(1)))
struct FileGrowthTests {
    @Test("returns once the file reaches the size, created after the wait began")
    func wakesOnWrites() async throws {
        let folder = NSTemporaryDirectory() + "growth-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/x.part"
        let waiting = Task { try await FileGrowth.waitUntil(path, hasAtLeast: 3000) }
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        for _ in 0..<3 { handle.write(Data(repeating: 7, count: 1000)) }
        try handle.close()
        #expect(try await waiting.value >= 3000)
    }

    @Test("a cancelled wait throws CancellationError without waiting out its time limit")
    func cancellation() async throws {
        let folder = NSTemporaryDirectory() + "growth-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let waiting = Task { try await FileGrowth.waitUntil(folder + "/never.part", hasAtLeast: 1, seconds: 600) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }
}
