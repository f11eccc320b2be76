import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// Exclusive names and the no-replace move, on real files.
@Suite("Downloads: name reservation and the final move", .timeLimit(.minutes(1)))
struct FileReservationTests {
    private func makeFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "/icres-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    private func write(_ text: String, _ path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private func read(_ path: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("reserving creates the name and its .part exclusively, numbering past taken names")
    func numbering() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write("mine", folder + "/p.jpg")
        let first = try FileReservation.reserve(directory: folder, stem: "p", ext: "jpg", overwrite: false)
        let second = try FileReservation.reserve(directory: folder, stem: "p", ext: "jpg", overwrite: false)
        #expect(first.name == "p (1).jpg")
        #expect(second.name == "p (2).jpg")
        #expect(FileManager.default.fileExists(atPath: first.partPath))
        #expect(read(folder + "/p.jpg") == "mine")
    }

    @Test("commit never replaces a file that appeared at the name meanwhile")
    func commitDoesNotReplace() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reservation = try FileReservation.reserve(directory: folder, stem: "q", ext: "jpg", overwrite: false)
        try write("body", reservation.partPath)
        // Someone removes the placeholder and puts their own file there.
        try FileManager.default.removeItem(atPath: reservation.path)
        try write("theirs", reservation.path)
        let used = try reservation.commit(overwrite: false)
        #expect(used.name == "q (1).jpg")
        #expect(read(folder + "/q.jpg") == "theirs")
        #expect(read(folder + "/q (1).jpg") == "body")
        #expect(!FileManager.default.fileExists(atPath: reservation.partPath))
    }

    @Test("a placeholder replaced by someone's non-empty file is left alone")
    func foreignFileAtPlaceholderKept() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reservation = try FileReservation.reserve(directory: folder, stem: "r", ext: nil, overwrite: false)
        try write("body", reservation.partPath)
        try write("theirs", reservation.path)  // same inode, now with content: not an empty placeholder
        let used = try reservation.commit(overwrite: false)
        #expect(used.name == "r (1)")
        #expect(read(folder + "/r") == "theirs")
    }

    @Test("overwrite replaces the existing file atomically at commit, not before")
    func overwrite() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write("old", folder + "/o.png")
        let reservation = try FileReservation.reserve(directory: folder, stem: "o", ext: "png", overwrite: true)
        #expect(reservation.name == "o.png")
        #expect(read(folder + "/o.png") == "old")
        try write("new", reservation.partPath)
        _ = try reservation.commit(overwrite: true)
        #expect(read(folder + "/o.png") == "new")
    }

    @Test("discard removes the .part and our placeholder only")
    func discard() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reservation = try FileReservation.reserve(directory: folder, stem: "d", ext: "jpg", overwrite: false)
        reservation.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test("a folder that refuses new files is 1010")
    func unwritableFolder() throws {
        guard getuid() != 0 else { return }  // root writes anywhere
        let folder = try makeFolder()
        defer {
            chmod(folder, 0o755)
            try? FileManager.default.removeItem(atPath: folder)
        }
        chmod(folder, 0o555)
        #expect(rpcError { _ = try FileReservation.reserve(directory: folder, stem: "x", ext: "jpg", overwrite: false) }?.kind == .forbidden)
    }
}
