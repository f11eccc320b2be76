import Foundation

/// The test corpus: real files written by others (provider API answers, PngSuite, libjpeg-turbo,
/// EXIF and jpeg-decoder images) that the tests, fuzzers and benchmarks read. It lives inside the
/// repository, at `Tests/Fixtures/corpus`, so that a clone in any folder passes its tests;
/// `$IMAGECACHED_CORPUS` points elsewhere on purpose (a newer copy being tried, say).
public enum Corpus {
    /// The corpus folder: `$IMAGECACHED_CORPUS` when set, else `Tests/Fixtures/corpus` of the
    /// package this file was compiled from. It never looks outside the repository.
    public static let root: URL = {
        if let env = ProcessInfo.processInfo.environment["IMAGECACHED_CORPUS"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        return repositoryRoot.appendingPathComponent("Tests/Fixtures/corpus")
    }()

    /// The repository this file belongs to: two folders up from `Tests/TestSupport/`.
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // TestSupport
        .deletingLastPathComponent() // Tests
        .deletingLastPathComponent()

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
