import Foundation
import GRDB
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// Placeholders in `ImageDimensionsStore`: remembered beside the sizes, persisted, kept when a
/// later size arrives without one, and a database written before they existed still loads.
@Suite("ImageDimensionsStore: placeholders persist beside the sizes", .timeLimit(.minutes(2)))
struct PlaceholderStoreTests {
    private static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dims-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static let size = ImageDimensionsStore.Size(width: 640, height: 427)
    private static let placeholder = ImagePlaceholder(blurHash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj", color: "#979695")

    @Test("a placeholder recorded by photo and URL is found after a reopen; a later size without one keeps it")
    func survivesReopen() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try ImageDimensionsStore(directory: folder)
        first.record(Self.size, placeholder: Self.placeholder, photo: "flickr:a", url: "https://images.example/a.jpg")
        first.flush()
        // A header read again (another size of the same image) records the size alone.
        first.record(.init(width: 641, height: 427), photo: "flickr:a", url: "https://images.example/a.jpg")
        first.record(Self.size, photo: "flickr:b", url: nil)
        first.close()

        let second = try ImageDimensionsStore(directory: folder)
        #expect(second.decoded(photo: "flickr:a") == .init(width: 641, height: 427))
        #expect(second.placeholder(photo: "flickr:a") == Self.placeholder)
        #expect(second.placeholder(url: "https://images.example/a.jpg") == Self.placeholder)
        #expect(second.placeholder(photo: "flickr:b") == nil)
        #expect(second.placeholders(photos: ["flickr:a", "flickr:b", "flickr:none"]) == ["flickr:a": Self.placeholder])
        // What search and photo.get answer: filled where the provider sent nothing, never over it.
        func photo(_ id: String, color: String?) -> Photo {
            var photo = Photo(id: id, provider: "flickr", width: nil, height: nil, thumbURL: "https://t", fullURL: "https://f",
                              author: .init(name: "A", profileURL: nil), likes: nil, description: nil, pageURL: nil)
            photo.color = color
            return photo
        }
        let filled = second.withPlaceholders([photo("flickr:a", color: nil), photo("flickr:b", color: nil), photo("flickr:a", color: "#010203")])
        #expect(filled[0].blurHash == Self.placeholder.blurHash && filled[0].color == Self.placeholder.color)
        #expect(filled[1].blurHash == nil && filled[1].color == nil)
        #expect(filled[2].blurHash == Self.placeholder.blurHash && filled[2].color == "#010203")
    }

    /// Runs `statements` on the store's file directly, as another program editing it would.
    static func editFile(in folder: String, _ statements: [String]) throws {
        let queue = try DatabaseQueue(path: folder + "/dimensions.sqlite")
        try queue.write { db in
            for statement in statements { try db.execute(sql: statement) }
        }
        try queue.close()
    }

    @Test("a dimensions database written before placeholders existed loads with its sizes, and takes placeholders")
    func oldFormatLoads() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The file exactly as the store wrote it before placeholders: three columns.
        try Self.editFile(in: folder, [
            "CREATE TABLE dimensions (key TEXT PRIMARY KEY NOT NULL, width INTEGER NOT NULL, height INTEGER NOT NULL)",
            "INSERT INTO dimensions (key, width, height) VALUES ('p|pixabay:1', 300, 200), ('u|https://x/1.jpg', 300, 200)",
        ])
        let store = try ImageDimensionsStore(directory: folder)
        #expect(store.decoded(photo: "pixabay:1") == .init(width: 300, height: 200))
        #expect(store.decoded(url: "https://x/1.jpg") == .init(width: 300, height: 200))
        #expect(store.placeholder(photo: "pixabay:1") == nil)
        store.record(.init(width: 300, height: 200), placeholder: Self.placeholder, photo: "pixabay:1", url: nil)
        store.close()
        let again = try ImageDimensionsStore(directory: folder)
        #expect(again.placeholder(photo: "pixabay:1") == Self.placeholder)
        #expect(again.decoded(url: "https://x/1.jpg") == .init(width: 300, height: 200))
    }

    @Test("a placeholder edited in the file (not a BlurHash, not #rrggbb) is left out, never passed on")
    func tamperedRowsAreDropped() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try ImageDimensionsStore(directory: folder)
        for id in ["flickr:hash", "flickr:colour", "flickr:good"] {
            first.record(Self.size, placeholder: Self.placeholder, photo: id, url: nil)
        }
        first.close()
        try Self.editFile(in: folder, [
            "UPDATE dimensions SET blurhash = '<script>' WHERE key = 'p|flickr:hash'",
            "UPDATE dimensions SET color = 'red;}body{display:none' WHERE key = 'p|flickr:colour'",
        ])
        let second = try ImageDimensionsStore(directory: folder)
        #expect(second.placeholders(photos: ["flickr:hash", "flickr:colour", "flickr:good"]) == ["flickr:good": Self.placeholder])
        #expect(second.decoded(photo: "flickr:hash") == Self.size)
        second.close()
    }
}
