import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import ImageCacheServer
import Logging
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
                       reservation: FileReservation(directory: folder, stem: id, ext: "jpg", number: 0, inode: nil, partInode: nil),
                       defaultName: true, overwrite: false, validator: "\"v\"", received: 0, total: nil, width: nil,
                       height: nil, error: state == .failed ? RPCError(.timeout, "stalled") : nil, tracked: false,
                       createdAt: (ended ?? Date()).addingTimeInterval(-10), endedAt: ended)
    }

    @Test("a saved table loads back identical, and leaves no temporary file")
    func roundTrip() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DownloadJobStore(stateDirectory: folder)
        let records = [record("a", state: .failed, ended: Date(timeIntervalSince1970: 1_700_000_000), folder: folder),
                       record("b", state: .queued, ended: nil, folder: folder)]
        try store.save(records)
        let loaded = store.load(logger: Logger(label: "test")).sorted { $0.id < $1.id }
        #expect(loaded == records)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.folder) == ["jobs.json"])
    }

    @Test("a torn or garbage table is moved aside and the daemon starts with none")
    func garbageTable() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DownloadJobStore(stateDirectory: folder)
        try Data("[{\"id\": ".utf8).write(to: URL(fileURLWithPath: store.folder + "/jobs.json"))
        #expect(store.load(logger: Logger(label: "test")).isEmpty)
        #expect(FileManager.default.fileExists(atPath: store.folder + "/jobs.json.bad"))
    }

    @Test("jobs that ended more than 24 h ago are dropped at start; younger ones stay listed")
    func retention() async throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try DownloadJobStore(stateDirectory: folder)
        let now = Date()
        try store.save([
            record("old", state: .finished, ended: now.addingTimeInterval(-25 * 3600), folder: folder),
            record("young", state: .failed, ended: now.addingTimeInterval(-23 * 3600), folder: folder),
        ])
        var settings = CacheConfiguration()
        settings.cache.cacheDir = folder
        settings.daemon.stateDir = folder
        let configuration = settings
        let engine = TransferEngine(configuration: configuration)
        defer { engine.shutdown() }
        let manager = DownloadManager(dependencies: .init(
            transfers: engine, registry: PhotoRegistry(), decodes: DecodeBudget(memory: 192 << 20, slots: 1),
            configuration: { configuration }, cacheDirectory: folder, logger: Logger(label: "test"),
            wireError: WireErrorMapping.rpcError(for:)), observer: { _ in })
        await manager.start()
        let ids = await manager.list().map(\.job)
        #expect(ids == ["young"])
        await manager.flush()
        #expect(store.load(logger: Logger(label: "test")).map(\.id) == ["young"])
        let failed = try await manager.status("young")
        #expect(failed.error?.kind == .timeout)
    }
}
