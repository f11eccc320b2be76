import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import Logging
import Testing

/// The job table's writer: every change handed over reaches the disk, the newest last, and
/// `flush()` returns only once the table holds every change made before it.
@Suite("Downloads: the job table's coalescing writer", .timeLimit(.minutes(1)))
struct DownloadTableWriterTests {
    private func record(_ id: String, folder: String) -> DownloadRecord {
        DownloadRecord(id: id, photo: nil, url: "http://127.0.0.1:9/a.jpg", variant: .full, state: .queued,
                       reservation: FileReservation(directory: folder, stem: id, ext: "jpg", number: 0, placeholder: nil, part: nil),
                       defaultName: true, overwrite: false, validator: nil, received: 0, total: nil, width: nil,
                       height: nil, error: nil, tracked: false, createdAt: Date(timeIntervalSince1970: 1_790_000_000), endedAt: nil)
    }

    @Test("a burst of changes: after flush the table on disk is the last one handed over")
    func burstThenFlush() async throws {
        let folder = NSTemporaryDirectory() + "/icwriter-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DownloadJobStore(stateDirectory: folder, cacheDirectory: folder)
        let writer = DownloadTableWriter(store: store, logger: Logger(label: "test"))
        await writer.flush()  // nothing handed over: returns at once
        #expect(store.load(logger: Logger(label: "test")).isEmpty)
        var table: [DownloadRecord] = []
        for index in 0..<200 {
            table.append(record("dl-\(index)", folder: folder))
            writer.save(table)
        }
        await writer.flush()
        #expect(store.load(logger: Logger(label: "test")).map(\.id).sorted() == table.map(\.id).sorted())
        // A change after a flush is written by the next one.
        writer.save(Array(table.prefix(3)))
        await writer.flush()
        #expect(store.load(logger: Logger(label: "test")).map(\.id) == ["dl-0", "dl-1", "dl-2"])
    }

    @Test("every waiter of a flush is woken, and only once the table holds the change")
    func manyWaiters() async throws {
        let folder = NSTemporaryDirectory() + "/icwriter-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DownloadJobStore(stateDirectory: folder, cacheDirectory: folder)
        let writer = DownloadTableWriter(store: store, logger: Logger(label: "test"))
        let table = (0..<20).map { record("dl-\($0)", folder: folder) }
        writer.save(Array(table.prefix(1)))
        writer.save(table)  // queued behind the first write, or replacing it
        let seen = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    await writer.flush()
                    return store.load(logger: Logger(label: "test")).count
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(seen == Array(repeating: 20, count: 20))
    }
}
