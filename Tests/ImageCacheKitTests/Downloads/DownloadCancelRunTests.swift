import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImageCacheConfig
@testable import ImageCacheKit
import ImageCacheProtocol
import Logging
import ProviderSimulator
import Testing
import TestSupport

/// `download.cancel` stops the job's run where it stands, not only its transfer: a run
/// waiting for a decode permit gives the wait up at once.
@Suite("Downloads: a cancel stops the run's task", .timeLimit(.minutes(1)))
struct DownloadCancelRunTests {
    @Test("a job found placed after a restart, waiting for a decode permit to re-check its file, stops waiting when cancelled")
    func cancelStopsAPermitWait() async throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("iccancelrun-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The file the run of a crashed daemon had already moved to its final name; the table
        // still says running (the `.part`'s identity is the file's).
        let file = folder + "/placed.jpg"
        try Data(SyntheticImages.jpeg(width: 64, height: 48, seed: 3)).write(to: URL(fileURLWithPath: file))
        let placed = try #require(FileIdentity.look(at: file, in: AT_FDCWD))
        let record = DownloadRecord(
            id: "dl-placed", photo: nil, url: "http://127.0.0.1:9/placed.jpg", variant: .full, state: .running,
            reservation: FileReservation(directory: folder, stem: "placed", ext: "jpg", number: 0, placeholder: nil,
                                         part: placed.identity),
            defaultName: false, overwrite: false, validator: nil, received: 0, total: nil, width: nil, height: nil,
            error: nil, tracked: false, createdAt: Date(), endedAt: nil)
        let store = try DownloadJobStore(stateDirectory: folder, cacheDirectory: folder)
        try store.save([record])
        store.release()  // the manager takes the table's lock

        // Both of the budget's slots are held here, so the run's re-check waits for one.
        let decodes = DecodeBudget(memory: 192 << 20, slots: 2)
        let held = [try await decodes.acquire(DecodeCost(bytes: 1 << 20, work: 1)),
                    try await decodes.acquire(DecodeCost(bytes: 1 << 20, work: 1))]
        #expect(decodes.available == 0)
        try await withDownloadManager(cacheDirectory: folder, downloadRoots: [folder], decodes: decodes) { manager in
            _ = try await poll(seconds: 20) { decodes.waiting == 1 ? true : nil }

            #expect(try await manager.cancel("dl-placed"))
            // The run gives its wait up without the slot being released.
            _ = try await poll(seconds: 20) { decodes.waiting == 0 ? true : nil }
            for permit in held { decodes.release(permit) }
            #expect(try await manager.status("dl-placed").state == .cancelled)
            // The job was never reported finished: its file, already at its final name, goes.
            #expect(!FileManager.default.fileExists(atPath: file))
        }
    }
}
