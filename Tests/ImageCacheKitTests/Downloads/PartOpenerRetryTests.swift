import Foundation
import Glibc
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Download confinement at the retry itself: the engine opens a download's `.part` through the
/// job's opener at every attempt, so a `.part` (or its folder) swapped for a symlink during a
/// retry's back-off is refused, never appended to. The swap is made by the test inside the
/// opener's second call, i.e. exactly between the cut first attempt and the retry.
@Suite("Downloads: the .part opener at every retry", .timeLimit(.minutes(2)))
struct PartOpenerRetryTests {
    private static let body = SyntheticImages.jpeg(width: 200, height: 200, seed: 41)

    /// A root with an empty `x.part`, and an outside folder holding a file that must stay as it is.
    private func makeFolders() throws -> (folder: String, root: String, outside: String) {
        let folder = DownloadDestination.realPath(NSTemporaryDirectory())! + "/icpo-" + UUID().uuidString
        for name in ["root/trip", "outside"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + name, withIntermediateDirectories: true)
        }
        try Data().write(to: URL(fileURLWithPath: folder + "/root/trip/x.part"))
        try Data("precious".utf8).write(to: URL(fileURLWithPath: folder + "/outside/x.part"))
        return (folder, folder + "/root", folder + "/outside")
    }

    /// Runs a resumable transfer whose first attempt is cut after 2000 bytes; `swap` runs just
    /// before the retry opens the file. Returns the error the transfer ended with, if any.
    private func transfer(root: String, swap: @escaping @Sendable () -> Void) async throws -> (RPCError?, Int) {
        try await NetworkFixture.withServer { server in
            server.serve("/x.jpg", body: Self.body, faults: [.truncate(afterBytes: 2000), .none])
            let folder = try DirectoryHandle.open(root + "/trip", roots: [root], create: false)
            let calls = LockedState(0)
            let real = folder.appendOpener("x.part", roots: { [root] })
            let opener: @Sendable () -> Int32 = {
                let call = calls.withLock { n in n += 1; return n }
                if call == 2 { swap() }
                return real()
            }
            let engine = NetworkFixture.engine()
            defer { engine.shutdown() }
            let request = TransferRequest(url: server.url("/x.jpg"), priority: .download,
                                          resume: .init(path: root + "/trip/x.part", validator: "\"v1\"", open: opener))
            do {
                _ = try await withTimeout(seconds: 30) { try await engine.start(request).result() }
                return (nil, calls.withLock { $0 })
            } catch {
                return (wire(error), calls.withLock { $0 })
            }
        }
    }

    @Test("the .part replaced by a symlink to an outside file during the back-off: the retry refuses it")
    func partSwappedDuringBackoff() async throws {
        let (folder, root, outside) = try makeFolders()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (error, calls) = try await transfer(root: root) {
            try? FileManager.default.removeItem(atPath: root + "/trip/x.part")
            try? FileManager.default.createSymbolicLink(atPath: root + "/trip/x.part", withDestinationPath: outside + "/x.part")
        }
        #expect(calls == 2)
        #expect(error != nil)
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: outside + "/x.part")), as: UTF8.self) == "precious")
    }

    @Test("the folder replaced by a symlink to outside during the back-off: the retry refuses it")
    func folderSwappedDuringBackoff() async throws {
        let (folder, root, outside) = try makeFolders()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (error, calls) = try await transfer(root: root) {
            try? FileManager.default.moveItem(atPath: root + "/trip", toPath: root + "/trip-moved")
            try? FileManager.default.createSymbolicLink(atPath: root + "/trip", withDestinationPath: outside)
        }
        #expect(calls == 2)
        #expect(error != nil)
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: outside + "/x.part")), as: UTF8.self) == "precious")
        // The cut first attempt's bytes stayed in the folder the job held.
        #expect((try? Data(contentsOf: URL(fileURLWithPath: root + "/trip-moved/x.part")))?.count == 2000)
    }

    @Test("nothing swapped: the retry continues the same .part and the file ends whole")
    func noSwapCompletes() async throws {
        let (folder, root, _) = try makeFolders()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (error, calls) = try await transfer(root: root) {}
        #expect(error == nil)
        #expect(calls == 2)
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: root + "/trip/x.part"))) == Self.body)
    }
}
