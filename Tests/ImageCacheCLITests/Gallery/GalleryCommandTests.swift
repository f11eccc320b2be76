import Foundation
import NIOConcurrencyHelpers
import Testing
import TestSupport
@testable import ImageCacheCLI

/// `imagecache demo --gallery` as a user runs it: the real binary starts the simulator, a
/// sandbox daemon and the gallery, prints the URL, serves the page, and on Ctrl-C stops the
/// daemon and removes its workspace.
@Suite("imagecache demo --gallery", .timeLimit(.minutes(3)))
struct GalleryCommandTests {
    @Test func demoGalleryServesThePageUntilCtrlCThenCleansUp() async throws {
        let pageStatus = NIOLockedValueBox<Int?>(nil)
        let result = try await withTimeout(seconds: 120) {
            try await CLIProcess.run(["demo", "--gallery", "--no-open"]) { line, pid in
                guard let range = line.range(of: #"http://127\.0\.0\.1:\d+/[0-9a-f]+/"#, options: .regularExpression) else { return }
                let url = URL(string: String(line[range]))!
                Task {
                    let page = try? await RawHTTP.get(port: url.port!, url.path + "/", headers: [("Host", "127.0.0.1:\(url.port!)")])
                    pageStatus.withLockedValue { $0 = page?.status ?? -1 }
                    kill(pid, SIGINT)
                }
            }
        }
        #expect(pageStatus.withLockedValue { $0 } == 200, "\(result.stdout)\n\(result.stderr)")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("exited with status 0"))
        let removed = try #require(result.stdout.split(separator: "\n").first { $0.contains("removed /tmp/imagecache-demo-") })
        #expect(!FileManager.default.fileExists(atPath: String(removed.split(separator: " ").last!)))
    }

    @Test func galleryWithoutADaemonSaysHowToStartOne() async throws {
        let result = try await withTimeout(seconds: 60) {
            try await CLIProcess.run(["gallery", "--no-open", "--socket", "/tmp/icg-nothing-\(UUID().uuidString.prefix(6)).sock"])
        }
        #expect(result.status == 69)
        #expect(result.stderr.contains("imagecached is not running"))
    }
}
