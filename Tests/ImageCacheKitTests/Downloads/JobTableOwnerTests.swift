import Foundation
@testable import ImageCacheKit
import Logging
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Each cache folder has its own job table in `state_dir`, with one owner at a time
/// (docs/operating.md, "Configuration"): daemons with their own caches and the default
/// `state_dir` never see each other's jobs.
@Suite("Downloads: one owner per job table", .timeLimit(.minutes(1)))
struct JobTableOwnerTests {
    /// Two cache folders and a state folder under one temporary folder.
    struct Place {
        let root = NSTemporaryDirectory() + "/icowner-" + UUID().uuidString
        var state: String { root + "/state" }
        func cache(_ name: String) -> String { root + "/" + name }

        init() throws {
            for name in ["a", "b"] {
                try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
            }
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    private func record(_ id: String) -> DownloadRecord {
        DownloadRecord(id: id, photo: nil, url: "http://127.0.0.1:9/a.jpg", variant: .full, state: .queued,
                       reservation: FileReservation(directory: "/nowhere", stem: id, ext: "jpg", number: 0, placeholder: nil, part: nil),
                       defaultName: true, overwrite: false, validator: nil, received: 0, total: nil, width: nil,
                       height: nil, error: nil, tracked: false, createdAt: Date(), endedAt: nil)
    }

    @Test("two cache folders keep two tables in one state folder, each seeing only its own jobs")
    func separateTables() throws {
        let place = try Place()
        defer { place.remove() }
        let a = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache("a"))
        let b = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache("b"))
        #expect(a.path != b.path)
        try a.save([record("dl-00000000000a")])
        try b.save([record("dl-00000000000b")])
        #expect(a.load(logger: Logger(label: "test")).map(\.id) == ["dl-00000000000a"])
        #expect(b.load(logger: Logger(label: "test")).map(\.id) == ["dl-00000000000b"])
    }

    @Test("a second owner of one cache folder's table is refused, naming the table and state_dir")
    func secondOwnerRefused() throws {
        let place = try Place()
        defer { place.remove() }
        let first = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache("a"))
        #expect {
            // The same folder through a doubled slash and a trailing one: the same table.
            _ = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.root + "//a/")
        } throws: { error in
            guard let inUse = error as? DownloadJobStore.InUse else { return false }
            return inUse.table == first.path && inUse.description.contains("state_dir")
                && inUse.description.contains(first.path)
        }
        first.release()
        let again = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache("a"))
        again.release()
    }

    @Test("the same folder through a symlink has the same table")
    func symlinkSameTable() throws {
        let place = try Place()
        defer { place.remove() }
        let link = place.root + "/link"
        #expect(symlink(place.cache("a"), link) == 0)
        #expect(DownloadJobStore.tableName(cacheDirectory: link) == DownloadJobStore.tableName(cacheDirectory: place.cache("a")))
        #expect(DownloadJobStore.tableName(cacheDirectory: place.cache("b")) != DownloadJobStore.tableName(cacheDirectory: place.cache("a")))
    }

    @Test("a store dropped without release() frees its table for the next owner")
    func droppedStoreReleases() throws {
        let place = try Place()
        defer { place.remove() }
        do {
            _ = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache("a"))
        }
        let next = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache("a"))
        next.release()
    }

    @Test("the state folder's shared jobs.json becomes the first opener's table; a second finds none to take")
    func sharedTableAdopted() throws {
        let place = try Place()
        defer { place.remove() }
        try FileManager.default.createDirectory(atPath: place.state, withIntermediateDirectories: true)
        let shared = place.state + "/jobs.json"
        try JSONEncoder().encode([record("dl-0000000000aa")]).write(to: URL(fileURLWithPath: shared))
        let a = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache("a"))
        a.migrate(fromCacheDirectory: place.cache("a"), logger: Logger(label: "test"))
        #expect(a.load(logger: Logger(label: "test")).map(\.id) == ["dl-0000000000aa"])
        #expect(!FileManager.default.fileExists(atPath: shared))
        let b = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache("b"))
        b.migrate(fromCacheDirectory: place.cache("b"), logger: Logger(label: "test"))
        #expect(b.load(logger: Logger(label: "test")).isEmpty)
        // A table of its own is never replaced by a shared one that turns up later.
        try JSONEncoder().encode([record("dl-0000000000cc")]).write(to: URL(fileURLWithPath: shared))
        a.migrate(fromCacheDirectory: place.cache("a"), logger: Logger(label: "test"))
        #expect(a.load(logger: Logger(label: "test")).map(\.id) == ["dl-0000000000aa"])
        #expect(FileManager.default.fileExists(atPath: shared))
    }
}
