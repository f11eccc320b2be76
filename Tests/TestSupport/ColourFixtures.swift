import Foundation

/// The colour-management fixtures: Display P3 and Adobe RGB images made with
/// Pillow's ImageCms and the reference conversions of their pixels to sRGB, in
/// `Tests/Fixtures/colour` (its README says how they were made).
public enum ColourFixtures {
    /// The fixture folder.
    public static let root = Corpus.repositoryRoot.appendingPathComponent("Tests/Fixtures/colour")

    /// The bytes of a fixture file.
    public static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: root.appendingPathComponent(name)))
    }
}
