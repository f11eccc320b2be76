import Foundation
import Glibc
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// A cache folder that cannot be written answers `1013 storage_unavailable` (
/// item 9), not `-32603 internal`: on a real tmpfs mounted for the test, filled to the last
/// byte (ENOSPC) and then with its folders bound read-only (EROFS), and the daemon serves
/// again once the folder is writable.
@Suite("Storage errors on the socket", .serialized, .timeLimit(.minutes(3)))
struct StorageUnavailableTests {
    /// A small tmpfs at a fresh folder, unmounted by `unmount()`.
    struct Mount {
        let path: String

        init?(sizeKiB: Int) {
            path = TestServer.makeFolder() + "/mnt"
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            guard Self.run(["mount", "-t", "tmpfs", "-o", "size=\(sizeKiB)k", "tmpfs", path]) == 0 else { return nil }
        }

        /// Makes `folder` (inside the mount) read-only with a read-only bind mount of itself:
        /// a whole-file-system `remount,ro` is refused while the daemon holds files open for
        /// writing (its index), and root ignores permission bits.
        static func bindReadOnly(_ folder: String) -> Bool {
            run(["mount", "--bind", folder, folder]) == 0 && run(["mount", "-o", "remount,bind,ro", folder]) == 0
        }

        /// Undoes `bindReadOnly(_:)`.
        static func unbind(_ folder: String) -> Bool {
            run(["umount", folder]) == 0
        }

        func unmount() {
            _ = Self.run(["umount", "--lazy", path])  // detached even while the test process still holds a file
            try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
        }

        /// Writes a file until the file system refuses more bytes (ENOSPC).
        func fill() -> String {
            let filler = path + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            defer { close(fd) }
            let chunk = [UInt8](repeating: 0xA5, count: 4096)
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            return filler
        }

        static func run(_ arguments: [String]) -> Int32 {
            runShortTool("/usr/bin/env", arguments)
        }

        /// Whether this machine lets the tests mount a tmpfs (root, outside a locked-down container).
        static let available: Bool = {
            guard let probe = Mount(sizeKiB: 64) else { return false }
            probe.unmount()
            return true
        }()
    }

    @Test("a full, then read-only cache folder is 1013 storage_unavailable; writable again, it serves",
          .enabled(if: Mount.available, "needs mount -t tmpfs (root)"))
    func cacheFolder() async throws {
        let mount = try #require(Mount(sizeKiB: 4096))
        defer { mount.unmount() }
        try await ThumbnailFixture.with(configure: { $0.cache.cacheDir = mount.path + "/cache" }) { f in
            let client = try await f.connect()
            // Warm: the folder works.
            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 1, "url": f.serve("/warm.jpg")]))
            let warm = try await client.answer(1).answer
            #expect(warm.resultObject != nil, "\(warm)")

            let filler = mount.fill()
            try await client.send(rpcLine(2, "thumbnail.show", ["slot": 2, "url": f.serve("/full.jpg", width: 1200, height: 900, seed: 2)]))
            let full = try await client.answer(2).answer
            #expect(full.errorCode == 1013 && full.errorKind == "storage_unavailable", "\(full)")
            try FileManager.default.removeItem(atPath: filler)

            let folders = ["tmp", "data"].map { mount.path + "/cache/" + $0 }
            for folder in folders { try #require(Mount.bindReadOnly(folder), "\(folder)") }
            try await client.send(rpcLine(3, "thumbnail.show", ["slot": 3, "url": f.serve("/ro.jpg", seed: 3)]))
            let readOnly = try await client.answer(3).answer
            #expect(readOnly.errorCode == 1013 && readOnly.errorKind == "storage_unavailable", "\(readOnly)")

            for folder in folders { try #require(Mount.unbind(folder), "\(folder)") }
            try await client.send(rpcLine(4, "thumbnail.show", ["slot": 4, "url": f.serve("/back.jpg", seed: 4)]))
            let back = try await client.answer(4).answer
            #expect(back.resultObject != nil, "\(back)")
            await client.close()
        }
    }

    /// The error a download to the folder ends with: its immediate answer's, or its
    /// `download.failed` notification's.
    private func downloadError(_ client: DownloadClient, url: String) async throws -> [String: Any]? {
        let answer = try await client.ask("download", ["url": url])
        if let error = answer["error"] as? [String: Any] { return error }
        let job = try #require((answer["result"] as? [String: Any])?["job"] as? String)
        let (method, params) = try await client.outcome(job: job)
        #expect(method == "download.failed", "\(params)")
        return params["error"] as? [String: Any]
    }

    @Test("a full, then read-only download folder is 1013 storage_unavailable; writable again, it downloads",
          .enabled(if: Mount.available, "needs mount -t tmpfs (root)"))
    func downloadFolder() async throws {
        let mount = try #require(Mount(sizeKiB: 4096))
        defer { mount.unmount() }
        let downloads = mount.path + "/Downloads"
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
        try await DownloadFixture.with { fixture in
            var configuration = fixture.configuration()
            configuration.downloads.downloadDir = [downloads]
            try await SearchDaemon.with(configuration) { daemon in
                let client = try await DownloadClient.connect(configuration.daemon.socket!)
                fixture.images.serve("/big.jpg", body: SyntheticImages.jpeg(width: 1600, height: 1200, seed: 7))

                let filler = mount.fill()
                let full = try await downloadError(client, url: fixture.images.url("/big.jpg"))
                #expect(full?["code"] as? Int == 1013, "\(String(describing: full))")
                #expect((full?["data"] as? [String: Any])?["kind"] as? String == "storage_unavailable")
                try FileManager.default.removeItem(atPath: filler)

                try #require(Mount.bindReadOnly(downloads))
                let readOnly = try await downloadError(client, url: fixture.images.url("/big.jpg"))
                #expect(readOnly?["code"] as? Int == 1013, "\(String(describing: readOnly))")
                try #require(Mount.unbind(downloads))

                let job = try await client.download(["url": fixture.images.url("/big.jpg")])
                let (method, params) = try await client.outcome(job: job)
                #expect(method == "download.finished", "\(params)")
                await client.close()
            }
        }
    }
}
