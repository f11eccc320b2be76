import Foundation
@testable import ImageCacheConfig
@testable import ImageCacheKit
import ImageCacheProtocol
import Logging
import ProviderSimulator
import Testing
import TestSupport

/// The persisted job table and what the manager does with it at start.
@Suite("Downloads: the job table", .timeLimit(.minutes(1)))
struct DownloadJobStoreTests {
    private func makeFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "/icjobs-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    private func record(_ id: String, state: DownloadState, ended: Date?, folder: String) -> DownloadRecord {
        DownloadRecord(id: id, photo: nil, url: "http://127.0.0.1:9/a.jpg", variant: .full, state: state,
                       reservation: FileReservation(directory: folder, stem: id, ext: "jpg", number: 0, placeholder: nil, part: nil),
                       defaultName: true, overwrite: false, validator: "\"v\"", received: 0, total: nil, width: nil,
                       height: nil, error: state == .failed ? DownloadFailure(.timeout, "stalled") : nil, tracked: false,
                       createdAt: (ended ?? Date()).addingTimeInterval(-10), endedAt: ended)
    }

    @Test("a saved table loads back identical, and leaves no temporary file")
    func roundTrip() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DownloadJobStore(stateDirectory: folder, cacheDirectory: folder)
        var queued = record("b", state: .queued, ended: nil, folder: folder)
        queued.reservation.placeholder = FileIdentity(device: 2049, inode: 12, born: 1_700_000_000_123_456_789, changed: nil)
        queued.reservation.part = FileIdentity(device: 2049, inode: 13, born: nil, changed: 1_700_000_000_000_000_001)
        let records = [record("a", state: .failed, ended: Date(timeIntervalSince1970: 1_700_000_000), folder: folder), queued]
        try store.save(records)
        let loaded = store.load(logger: Logger(label: "test")).sorted { $0.id < $1.id }
        #expect(loaded == records)
        let lock = String(store.name.dropLast(".json".count)) + ".lock"
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.folder).sorted() == [store.name, lock].sorted())
    }

    @Test("a torn or garbage table is moved aside and the daemon starts with none")
    func garbageTable() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DownloadJobStore(stateDirectory: folder, cacheDirectory: folder)
        try Data("[{\"id\": ".utf8).write(to: URL(fileURLWithPath: store.path))
        #expect(store.load(logger: Logger(label: "test")).isEmpty)
        #expect(FileManager.default.fileExists(atPath: store.path + ".bad"))
    }

    @Test("at most the newest 1000 ended jobs of each owner are kept; unfinished ones and another owner's stay")
    func endedLimitPerOwner() async throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DownloadJobStore(stateDirectory: folder, cacheDirectory: folder)
        let now = Date()
        let limit = DownloadJobTable.endedLimitPerOwner
        var records = (0..<(limit + 5)).map { index in
            record("daemon-\(index)", state: .finished, ended: now.addingTimeInterval(Double(index - limit - 5)), folder: folder)
        }
        for index in 0..<3 {
            var other = record("peer-\(index)", state: .failed, ended: now.addingTimeInterval(-3600), folder: folder)
            other.owner = 1000
            records.append(other)
        }
        records.append(record("queued", state: .queued, ended: nil, folder: folder))
        try store.save(records)
        store.release()  // the manager takes the table's lock
        try await withDownloadManager(cacheDirectory: folder) { manager in
            // It ends one way or another: resumed against a closed port outside the roots, or cancelled.
            _ = try? await manager.cancel("queued")
            let ended = try await manager.status("queued")
            #expect(ended.state != .queued && ended.state != .running)
            await manager.flush()
            let kept = Set(store.load(logger: Logger(label: "test")).map(\.id))
            // The cancelled job is the newest ended one of its owner: it stays, and pushes one more out.
            #expect(kept.filter { $0.hasPrefix("daemon-") }.count == limit - 1)
            #expect(kept.contains("queued"))
            #expect(!kept.contains("daemon-0") && !kept.contains("daemon-5") && kept.contains("daemon-6"))
            #expect(kept.isSuperset(of: ["peer-0", "peer-1", "peer-2"]))
        }
    }

    @Test("jobs that ended more than 24 h ago are dropped at start; younger ones stay listed")
    func retention() async throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DownloadJobStore(stateDirectory: folder, cacheDirectory: folder)
        let now = Date()
        try store.save([
            record("old", state: .finished, ended: now.addingTimeInterval(-25 * 3600), folder: folder),
            record("young", state: .failed, ended: now.addingTimeInterval(-23 * 3600), folder: folder),
        ])
        store.release()  // the manager takes the table's lock
        try await withDownloadManager(cacheDirectory: folder) { manager in
            let ids = await manager.list().map(\.id)
            #expect(ids == ["young"])
            await manager.flush()
            #expect(store.load(logger: Logger(label: "test")).map(\.id) == ["young"])
            let failed = try await manager.status("young")
            #expect(failed.error?.kind == .timeout)
        }
    }

    @Test("a job moved to its final name before the table said so finishes at the next start, fetching nothing")
    func movedBeforeTheTableSaidSo() async throws {
        // As the daemon records it: resolved, no doubled slash.
        let folder = (try makeFolder() as NSString).standardizingPath
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // What a crash right after `download.finished` leaves: the verified body at its final
        // name (the `.part`'s identity), no `.part`, and the table still saying "running".
        let body = SyntheticImages.jpeg(width: 64, height: 48)
        let final = folder + "/moved.jpg"
        #expect(FileManager.default.createFile(atPath: final, contents: Data(body)))
        let moved = try #require(FileIdentity.look(at: final, in: AT_FDCWD))
        var running = record("moved", state: .running, ended: nil, folder: folder)
        running.reservation.part = moved.identity
        running.total = body.count
        let store = try DownloadJobStore(stateDirectory: folder, cacheDirectory: folder)
        try store.save([running])
        store.release()  // the manager takes the table's lock

        let finished = AsyncStream.makeStream(of: DownloadEvent.self)
        try await withDownloadManager(cacheDirectory: folder, downloadRoots: [folder],
                                      observer: { finished.continuation.yield($0) }) { _ in
            // The record's URL is a closed port: a fetch would fail the job, not finish it.
            let event = try await withTimeout(seconds: 30) { () async -> DownloadEvent? in
                for await event in finished.stream {
                    if case .progress = event { continue }
                    return event
                }
                return nil
            }
            guard case .finished(let done)? = event else {
                Issue.record("expected download.finished, got \(String(describing: event))")
                return
            }
            #expect(done.path == final)
            #expect(done.bytes == body.count)
            #expect(done.width == 64 && done.height == 48)
        }
        // The manager's table was flushed as the fixture ended.
        #expect(store.load(logger: Logger(label: "test")).first?.state == .finished)
    }
}
