import Foundation
import TestSupport

/// The corpus's `expectations.json`: what libjpeg-turbo 2.1.5 and libpng 1.6.39 did with each
/// file. Used as a regression baseline (not ground truth): a clean "decodes" must still decode
/// and a "fails" must still fail, except where this project's policy deliberately differs
/// (each such file is listed, with the reason, where it is used).
struct CorpusExpectations {
    struct Entry {
        var path: String
        var verdict: String
        var width: Int?
        var height: Int?
        var exifOrientation: Int?
        var colorSpace: String?
        var progressive: Bool?
        /// Warnings libjpeg/libpng raised, and the first one's text (nil when none).
        var warnings: Int
        var firstWarning: String?
    }

    let entries: [String: Entry]

    private static let loaded = Result { try CorpusExpectations() }

    /// The parsed file, read once; throws (failing the calling test) when it is unreadable.
    static func shared() throws -> CorpusExpectations { try loaded.get() }

    init() throws {
        let data = try Data(contentsOf: Corpus.url("expectations.json"))
        let root = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let files = root?["files"] as? [String: [String: Any]] ?? [:]
        var entries: [String: Entry] = [:]
        for (path, file) in files {
            let result = (file["libjpeg_native"] ?? file["libpng"]) as? [String: Any] ?? [:]
            entries[path] = Entry(
                path: path,
                verdict: result["verdict"] as? String ?? "unknown",
                width: result["width"] as? Int,
                height: result["height"] as? Int,
                exifOrientation: file["exif_orientation"] as? Int,
                colorSpace: result["jpeg_color_space"] as? String,
                progressive: result["progressive"] as? Bool,
                warnings: result["warnings"] as? Int ?? 0,
                firstWarning: result["first_warning"] as? String)
        }
        self.entries = entries
    }

    /// Entries under a folder, sorted by path.
    func under(_ folder: String) -> [Entry] {
        entries.values.filter { $0.path.hasPrefix(folder + "/") }.sorted { $0.path < $1.path }
    }
}
