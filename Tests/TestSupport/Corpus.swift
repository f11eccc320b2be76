import Foundation

/// Where the shared test corpus lives: `../shared/corpus` beside the repository, or
/// `$IMAGECACHED_CORPUS` when set. Real files written by others, never generated here.
public enum Corpus {
    /// The corpus folder: `$IMAGECACHED_CORPUS`, else the first `shared/corpus` found
    /// walking up from this file (the repository's sibling in a clone or a worktree).
    public static let root: URL = {
        if let env = ProcessInfo.processInfo.environment["IMAGECACHED_CORPUS"] {
            return URL(fileURLWithPath: env)
        }
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("shared/corpus")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus")
    }()

    /// The URL of a corpus file by its path relative to the corpus root.
    public static func url(_ relativePath: String) -> URL {
        root.appendingPathComponent(relativePath)
    }

    /// The bytes of a corpus file.
    public static func bytes(_ relativePath: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url(relativePath)))
    }

    /// The files of a corpus folder, sorted, as paths relative to the corpus root.
    public static func files(in folder: String, withExtension ext: String? = nil) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: url(folder).path)
        return names.filter { ext == nil || $0.hasSuffix("." + ext!) }.sorted().map { folder + "/" + $0 }
    }
}
