import Foundation

/// The BlurHash reference vectors the project copied for itself, in
/// `Tests/Fixtures/blurhash` (its NOTES.md says where each came from); the shared corpus's
/// `blurhash/reference-hashes.csv` holds other rows of the same reference file.
public enum BlurHashFixtures {
    /// The fixture folder.
    public static let root = Corpus.repositoryRoot.appendingPathComponent("Tests/Fixtures/blurhash")

    /// The text of a fixture file.
    public static func text(_ name: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
    }
}
