import Foundation
@testable import ImageCacheConfig
@testable import ImageCacheKit
import ImageCacheProtocol
import Logging
import Testing
import TestSupport

/// The job table is state, not cache: it lives in `state_dir`, and a table left in
/// `cache_dir/downloads/` by an older daemon moves there on the first start, whole or not at all.
@Suite("Downloads: the job table moves to the state folder", .timeLimit(.minutes(1)))
struct JobTableMigrationTests {
    /// A cache folder and a state folder under one temporary folder.
    struct Place {
        let root = NSTemporaryDirectory() + "/icmove-" + UUID().uuidString
        var cache: String { root + "/cache" }
        var state: String { root + "/state" }
        var oldTable: String { cache + "/downloads/jobs.json" }
        var newTable: String { state + "/" + DownloadJobStore.tableName(cacheDirectory: cache) }

        func writeOld(_ text: String) throws {
            try FileManager.default.createDirectory(atPath: cache + "/downloads", withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: oldTable))
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    private func record(_ id: String, folder: String) -> DownloadRecord {
        DownloadRecord(id: id, photo: nil, url: "http://127.0.0.1:9/a.jpg", variant: .full, state: .queued,
                       reservation: FileReservation(directory: folder, stem: id, ext: "jpg", number: 0, placeholder: nil, part: nil),
                       defaultName: true, overwrite: false, validator: nil, received: 0, total: nil, width: nil,
                       height: nil, error: nil, tracked: false, createdAt: Date(), endedAt: nil)
    }

    private func encoded(_ records: [DownloadRecord]) throws -> String {
        String(decoding: try JSONEncoder().encode(records), as: UTF8.self)
    }

    @Test("an old table moves whole into the state folder and the old one is gone")
    func moves() throws {
        let place = Place()
        defer { place.remove() }
        let records = [record("dl-000000000001", folder: place.root), record("dl-000000000002", folder: place.root)]
        try place.writeOld(try encoded(records))
        let store = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache)
        store.migrate(fromCacheDirectory: place.cache, logger: Logger(label: "test"))
        #expect(store.load(logger: Logger(label: "test")).map(\.id).sorted() == ["dl-000000000001", "dl-000000000002"])
        #expect(!FileManager.default.fileExists(atPath: place.oldTable))
        #expect(!FileManager.default.fileExists(atPath: place.cache + "/downloads"), "the emptied old folder is removed")
        let mode = try FileManager.default.attributesOfItem(atPath: place.state)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    @Test("half-moved (a crash after the new table was written): the new one wins, the old one goes")
    func halfMoved() throws {
        let place = Place()
        defer { place.remove() }
        let store = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache)
        try store.save([record("dl-00000000000a", folder: place.root)])
        try place.writeOld(try encoded([record("dl-0000000000ff", folder: place.root)]))
        try Data("torn".utf8).write(to: URL(fileURLWithPath: place.oldTable + ".tmp"))
        store.migrate(fromCacheDirectory: place.cache, logger: Logger(label: "test"))
        #expect(store.load(logger: Logger(label: "test")).map(\.id) == ["dl-00000000000a"])
        #expect(!FileManager.default.fileExists(atPath: place.oldTable))
        #expect(!FileManager.default.fileExists(atPath: place.oldTable + ".tmp"))
    }

    @Test("a corrupt old table is kept aside in the state folder, and the start goes on with no jobs")
    func corrupt() throws {
        let place = Place()
        defer { place.remove() }
        try place.writeOld("[{\"id\": ")
        let store = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache)
        store.migrate(fromCacheDirectory: place.cache, logger: Logger(label: "test"))
        #expect(store.load(logger: Logger(label: "test")).isEmpty)
        #expect(try String(contentsOfFile: place.newTable + ".bad", encoding: .utf8) == "[{\"id\": ")
        #expect(!FileManager.default.fileExists(atPath: place.oldTable))
    }

    @Test("no old table: nothing happens, and a second start does not move anything again")
    func nothingToMove() throws {
        let place = Place()
        defer { place.remove() }
        let store = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache)
        store.migrate(fromCacheDirectory: place.cache, logger: Logger(label: "test"))
        // Only the table's lock: no table was made.
        #expect(try FileManager.default.contentsOfDirectory(atPath: place.state) == [String(store.name.dropLast(".json".count)) + ".lock"])
        #expect(!FileManager.default.fileExists(atPath: place.cache))
    }

    @Test("the manager reads a table an older daemon left in cache_dir, from state_dir")
    func managerMigratesAtStart() async throws {
        let place = Place()
        defer { place.remove() }
        try place.writeOld(try encoded([record("dl-0000000000c1", folder: place.root)]))
        try await withDownloadManager(cacheDirectory: place.cache, stateDirectory: place.state, start: false) { manager in
            #expect(await manager.list().map(\.id) == ["dl-0000000000c1"])
        }
        #expect(FileManager.default.fileExists(atPath: place.newTable))
        #expect(!FileManager.default.fileExists(atPath: place.oldTable))
    }

    @Test("an older table's bare inode numbers load, confirm no file (the job removes nothing by them), and are saved back as identities")
    func bareInodeNumbers() throws {
        let place = Place()
        defer { place.remove() }
        let folder = try #require(DownloadDestination.realPath(NSTemporaryDirectory())) + "/icold-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The files an older daemon's job left: its empty placeholder, and the file its `.part`
        // became, each at the inode number the table names.
        #expect(FileManager.default.createFile(atPath: folder + "/old.jpg", contents: nil))
        #expect(FileManager.default.createFile(atPath: folder + "/old (1).jpg", contents: Data("body".utf8)))
        let placeholder = try #require(FileIdentity.look(at: folder + "/old.jpg", in: AT_FDCWD)).identity.inode
        let body = try #require(FileIdentity.look(at: folder + "/old (1).jpg", in: AT_FDCWD)).identity.inode
        let store = try DownloadJobStore(stateDirectory: place.state, cacheDirectory: place.cache)
        // As an older daemon wrote it: `inode` and `partInode`, numbers alone.
        try Data("""
            [{"id":"dl-0000000000b1","url":"http://127.0.0.1:9/old.jpg","variant":"full","state":"running",\
            "reservation":{"directory":"\(folder)","stem":"old","ext":"jpg","number":0,"inode":\(placeholder),"partInode":\(body)},\
            "defaultName":false,"overwrite":false,"received":4,"tracked":false,"createdAt":786000000}]
            """.utf8).write(to: URL(fileURLWithPath: store.path))

        let loaded = store.load(logger: Logger(label: "test"))
        let reservation = try #require(loaded.first).reservation
        #expect(loaded.map(\.id) == ["dl-0000000000b1"])
        #expect(reservation.placeholder == FileIdentity(device: nil, inode: placeholder, born: nil, changed: nil))
        #expect(reservation.part == FileIdentity(device: nil, inode: body, born: nil, changed: nil))

        // Neither number can be confirmed (another file may hold it now): nothing is adopted
        // or removed by them, not by a restart, not by a cancel.
        let handle = try DirectoryHandle.open(folder, roots: [folder], create: false)
        #expect(reservation.committedFile(in: handle) == nil)
        reservation.discardWithCommitted(in: handle)
        #expect(FileManager.default.fileExists(atPath: folder + "/old.jpg"))
        #expect(FileManager.default.contents(atPath: folder + "/old (1).jpg") == Data("body".utf8))

        // Saved again, the table has identities only, and reads back the same.
        try store.save(loaded)
        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        #expect(!text.contains("partInode") && !text.contains("\"inode\":\(placeholder),"))
        #expect(store.load(logger: Logger(label: "test")) == loaded)
    }

    @Test("state_dir: STATE_DIRECTORY under systemd, else XDG_STATE_HOME, else ~/.local/state")
    func defaults() throws {
        #expect(EnvironmentDefaults(environment: ["HOME": "/h", "STATE_DIRECTORY": "/var/lib/imagecached:/x"]).stateDirectory == "/var/lib/imagecached")
        #expect(EnvironmentDefaults(environment: ["HOME": "/h", "XDG_STATE_HOME": "/s"]).stateDirectory == "/s/imagecached")
        #expect(EnvironmentDefaults(environment: ["HOME": "/h", "XDG_STATE_HOME": "relative"]).stateDirectory == "/h/.local/state/imagecached")
        let parsed = try CacheConfiguration.parse(text: "[daemon]\nstate_dir = /srv/state\n", path: "t.conf", environment: ["HOME": "/h"])
        #expect(parsed.resolvedStateDirectory == "/srv/state")
    }

    @Test("--check-config names state_dir when it cannot be created")
    func checked() throws {
        let place = Place()
        defer { place.remove() }
        try FileManager.default.createDirectory(atPath: place.root, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: place.root + "/file"))
        var configuration = CacheConfiguration()
        configuration.cache.cacheDir = place.cache
        configuration.daemon.stateDir = place.root + "/file/state"
        configuration.daemon.socket = place.root + "/d.sock"
        configuration.downloads.downloadDir = [place.root]
        let problems = ConfigurationCheck.problems(of: configuration, socketActivated: false)
        #expect(problems.map(\.key) == ["state_dir"], "\(problems)")
    }
}
