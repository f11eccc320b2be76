import Foundation
@testable import ImageCacheConfig
@testable import ImageCacheKit
import Testing

/// The environment most parser tests use: a home, nothing else, so defaults are predictable.
let testEnvironment = ["HOME": "/home/tester"]

/// Parses `text` as a file named `cache.conf`.
func parseConfig(_ text: String, environment: [String: String] = testEnvironment) throws -> CacheConfiguration {
    try CacheConfiguration.parse(text: text, path: "cache.conf", environment: environment)
}

/// The description of the error parsing `text` throws; records an issue when it parses.
func parseError(_ text: String, environment: [String: String] = testEnvironment,
                sourceLocation: SourceLocation = #_sourceLocation) -> String? {
    do {
        _ = try parseConfig(text, environment: environment)
        Issue.record("expected a configuration error", sourceLocation: sourceLocation)
        return nil
    } catch let error as ConfigurationError {
        return error.description
    } catch {
        Issue.record("unexpected error type: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A fresh folder under the system's temporary directory, removed when released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("imagecached-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` to `relative` (creating folders), returning the file's absolute path.
    @discardableResult
    func write(_ relative: String, _ text: String) throws -> String {
        let file = path + "/" + relative
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }
}

/// The repository's root folder, found from this file's place in Tests/ImageCacheKitTests/Config.
let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
