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

    @Test("names are NFC: the NFD and NFC spellings of é.jpg are one name")
    func nfc() {
        let nfd = "e\u{301}.jpg"
        #expect(DownloadDestination.sanitise(nfd) == "\u{E9}.jpg")
        #expect(Array(DownloadDestination.sanitise(nfd)!.utf8) == Array("\u{E9}.jpg".utf8))
        // A control character dropped between a letter and its accent still leaves NFC.
        #expect(Array(DownloadDestination.sanitise("e\u{7}\u{301}.jpg")!.utf8) == Array("\u{E9}.jpg".utf8))
    }

    @Test("trailing dots and spaces are trimmed", arguments: [("photo.jpg.", "photo.jpg"), ("photo.jpg . .", "photo.jpg"), ("a. ", "a")])
    func trailingTrimmed(input: String, expected: String) {
        #expect(DownloadDestination.sanitise(input) == expected)
    }

    @Test("bidi overrides and other format characters are refused with -32602 on field filename",
          arguments: ["\u{202E}gpj.exe", "a\u{200B}b.jpg", "\u{2066}x.jpg", "x\u{FEFF}.png", "\u{61C}a.jpg"])
    func formatCharactersRefused(input: String) {
        let error = rpcError { _ = try DownloadDestination.checkedName(input) }
        #expect(error?.kind == .invalidParams)
        #expect(error?.data.field == "filename")
    }

    @Test("a name ending with the reserved .part (any case, also once trimmed) is refused",
          arguments: ["victim.jpg.part", "x.PART", "y.part. ", "z.part\u{7}"])
    func reservedSuffixRefused(input: String) {
        let error = rpcError { _ = try DownloadDestination.checkedName(input) }
        #expect(error?.kind == .invalidParams)
        #expect(error?.data.field == "filename")
        #expect(error?.message.contains(".part") == true)
    }

    @Test("an ordinary name passes the checks cleaned; control characters are still dropped")
    func checkedNamePasses() throws {
        #expect(try DownloadDestination.checkedName("  my\tphoto.jpg. ") == "myphoto.jpg")
        #expect(try DownloadDestination.checkedName("part.jpg") == "part.jpg")
        #expect(try DownloadDestination.checkedName("..") == nil)
    }

    @Test("a long name is cut to the byte limit with its extension kept, on a character boundary")
    func longNameKeepsExtension() {
        let name = String(repeating: "é", count: 300) + ".jpeg"
        let clean = DownloadDestination.sanitise(name)!
        #expect(clean.utf8.count <= DownloadDestination.maxNameBytes)
        #expect(clean.hasSuffix(".jpeg"))
        #expect(clean.dropLast(5).allSatisfy { $0 == "é" })
        // The longest name, numbered and with `.part`, still fits NAME_MAX.
        #expect(clean.utf8.count + " (9999)".utf8.count + ".part".utf8.count <= 255)
        let noExtension = String(repeating: "a", count: 400)
        #expect(DownloadDestination.sanitise(noExtension)?.utf8.count == DownloadDestination.maxNameBytes)
        #expect(DownloadDestination.defaultStem(photo: String(repeating: "b", count: 400), url: "").utf8.count + ".jpg".utf8.count
                <= DownloadDestination.maxNameBytes)
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
        #expect(DownloadDestination.guessedExtension(url: "https://host/a.webp?w=10") == "webp")
        #expect(DownloadDestination.guessedExtension(url: "https://host/a.JPEG") == "jpg")
        #expect(DownloadDestination.guessedExtension(url: "https://host/a.avif") == "avif")
        #expect(DownloadDestination.guessedExtension(url: "https://host/notes.txt") == "jpg")
    }

    @Test("a folder inside a root resolves; /etc, .. and a symlink out are 1010")
    func directories() throws {
        let (folder, root) = try makeRoot()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try DownloadDestination.resolveDirectory(nil, roots: [root]).path == root)
        #expect(try DownloadDestination.resolveDirectory(root + "/a/b", roots: [root]).path == root + "/a/b")
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
        #expect(try DownloadDestination.resolveDirectory(folder + "/alias/sub", roots: [folder + "/alias"]).path == root + "/sub")
        #expect(try DownloadDestination.resolveDirectory(root, roots: [folder + "/alias"]).path == root)
    }
}
