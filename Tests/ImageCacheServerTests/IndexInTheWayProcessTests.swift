import DaemonChild
import Foundation
import Glibc
import Testing
import TestSupport

/// The real `imagecached` with something other than a file at its cache index's path: moved
/// aside and the index rebuilt, or, when it cannot be moved, a start refused with exit 78 and
/// the path to remove (docs/operating.md, "Configuration").
@Suite("imagecached: what stands in the cache index's way", .serialized, .timeLimit(.minutes(3)))
struct IndexInTheWayProcessTests {
    /// A configuration with its own socket and cache folder under `folder`.
    private func writeConfig(_ folder: String) throws -> (config: String, socket: String, cache: String) {
        let cache = folder + "/cache"
        let config = folder + "/cache.conf"
        let socket = folder + "/d.sock"
        try Data("""
            [daemon]
            socket = \(socket)
            state_dir = \(folder)/state
            [cache]
            cache_dir = \(cache)
            """.utf8).write(to: URL(fileURLWithPath: config))
        return (config, socket, cache)
    }

    @Test("a folder at index.sqlite is moved aside whole, logged at notice, and the daemon serves")
    func folderMovedAside() async throws {
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (config, socket, cache) = try writeConfig(folder)
        let index = cache + "/index.sqlite"
        try FileManager.default.createDirectory(atPath: index, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: index + "/notes.txt"))

        let daemon = try DaemonProcess(arguments: ["--config", config], environment: DaemonProcess.environment(home: folder))
        defer { daemon.kill() }
        try await daemon.waitForLog("serving")
        let client = try await RawClient.connect(socket)
        let answer = try await client.call(#"{"jsonrpc":"2.0","id":1,"method":"stats"}"#)
        #expect(answer.resultObject?["disk"] != nil)
        await client.close()

        let aside = try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasPrefix("index.sqlite.in-the-way.") }
        #expect(aside.count == 1)
        let moved = cache + "/" + (aside.first ?? "")
        #expect(FileManager.default.contents(atPath: moved + "/notes.txt") == Data("keep me".utf8))
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: index, isDirectory: &isFolder) && !isFolder.boolValue)
        #expect(daemon.log.contains { $0.contains(" notice ") && $0.contains("moved aside") && $0.contains(moved) })
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
    }

    /// Root only: a mount point (private to the child's mount namespace) cannot be renamed
    /// (EBUSY), whoever asks; `chmod` stops nothing for root.
    @Test("when it cannot be moved (a mount point), start-up exits 78 naming the path to remove",
          .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
    func immovableRefused() async throws {
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (config, socket, cache) = try writeConfig(folder)
        let index = cache + "/index.sqlite"
        try FileManager.default.createDirectory(atPath: index, withIntermediateDirectories: true)
        let script = "mount -t tmpfs none \"$1\" || exit 111; shift; exec \"$@\""
        let daemon = try DaemonProcess(executable: URL(fileURLWithPath: "/usr/bin/unshare"),
                                       arguments: ["-m", "/bin/sh", "-c", script, "sh", index,
                                                   DaemonProcess.executable.path, "--config", config],
                                       environment: DaemonProcess.environment(home: folder))
        defer { daemon.kill() }
        #expect(try await daemon.waitForExit() == 78, "\(daemon.log)")
        #expect(daemon.log.contains { $0.contains("remove or rename \(index) yourself") && $0.contains("a folder") }, "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: socket))
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: index, isDirectory: &isFolder) && isFolder.boolValue)
    }
}
