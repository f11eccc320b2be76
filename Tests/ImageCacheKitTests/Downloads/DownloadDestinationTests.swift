import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// Where a download may go and what it is called, on real folders and symlinks.
@Suite("Downloads: destination rules", .timeLimit(.minutes(1)))
struct DownloadDestinationTests {
    /// A fresh resolved folder with a `root` inside, removed by the caller.
    private func makeRoot() throws -> (folder: String, root: String) {
        let folder = DownloadDestination.realPath(NSTemporaryDirectory())! + "/icdl-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder + "/root", withIntermediateDirectories: true)
        return (folder, folder + "/root")
    }

    @Test("names lose slashes, control characters, .. and leading dots", arguments: [
        ("../../x", "_._x"), ("a/b.jpg", "a_b.jpg"), (".hidden.jpg", "hidden.jpg"), ("tab\tname\u{7}.jpg", "tabname.jpg"),
        ("  spaced  ", "spaced"), ("a....b.png", "a.b.png"), ("C:\\evil.jpg", "C:_evil.jpg"),
    ])
    func sanitising(input: String, expected: String) {
        #expect(DownloadDestination.sanitise(input) == expected)
    }

    @Test("a name that sanitises to nothing gives nil (the default name is used)")
    func emptyAfterSanitising() {
        #expect(DownloadDestination.sanitise("..") == nil)
        #expect(DownloadDestination.sanitise("\u{1}\u{2}") == nil)
    }

    @Test("a very long name is cut to the byte limit")
    func longNameCut() {
        let name = String(repeating: "é", count: 300) + ".jpg"
        let clean = DownloadDestination.sanitise(name)!
        #expect(clean.utf8.count <= DownloadDestination.maxNameBytes)
    }

    @Test("default names come from the photo id or the URL's last component")
    func defaultNames() {
        #expect(DownloadDestination.defaultStem(photo: "unsplash:Dwu85P9SOIk", url: "https://x/y.jpg") == "unsplash-Dwu85P9SOIk")
        #expect(DownloadDestination.defaultStem(photo: nil, url: "https://host/a/sunset.jpeg?w=10") == "sunset")
        #expect(DownloadDestination.defaultStem(photo: nil, url: "https://host/") == "image")
        #expect(DownloadDestination.guessedExtension(url: "https://host/a.PNG") == "png")
        #expect(DownloadDestination.guessedExtension(url: "https://host/a") == "jpg")
    }

    @Test("a folder inside a root resolves; /etc, .. and a symlink out are 1010")
    func directories() throws {
        let (folder, root) = try makeRoot()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try DownloadDestination.resolveDirectory(nil, roots: [root]) == root)
        #expect(try DownloadDestination.resolveDirectory(root + "/a/b", roots: [root]) == root + "/a/b")
        #expect(rpcError { _ = try DownloadDestination.resolveDirectory("/etc", roots: [root]) }?.kind == .forbidden)
        #expect(rpcError { _ = try DownloadDestination.resolveDirectory(root + "/..", roots: [root]) }?.kind == .forbidden)
        #expect(rpcError { _ = try DownloadDestination.resolveDirectory(root + "/new/../../out", roots: [root]) }?.kind == .forbidden)
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: folder)
        #expect(rpcError { _ = try DownloadDestination.resolveDirectory(root + "/link", roots: [root]) }?.kind == .forbidden)
        #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
    }

    @Test("a root that is itself a symlink is compared by where it points")
    func symlinkedRoot() throws {
        let (folder, root) = try makeRoot()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder + "/alias", withDestinationPath: root)
        #expect(try DownloadDestination.resolveDirectory(folder + "/alias/sub", roots: [folder + "/alias"]) == root + "/sub")
        #expect(try DownloadDestination.resolveDirectory(root, roots: [folder + "/alias"]) == root)
    }
}
