import ArgumentParser
import Foundation
import ImageCacheKit

/// Runs the daemon with a loaded, validated configuration until SIGTERM/SIGINT.
///
/// The server is not part of this build yet: this says so and exits with status 78, like a
/// configuration that cannot be served, so a service manager does not restart it in a loop.
func runDaemon(configuration: CacheConfiguration) async throws {
    FileHandle.standardError.write(Data("imagecached: the server is not yet part of this build\n".utf8))
    throw ExitCode(78)
}
