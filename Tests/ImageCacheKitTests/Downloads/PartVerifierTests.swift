import Dispatch
import Foundation
import Glibc
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// `PartVerifier` decodes on threads of its own (`VerificationThreads`): on Linux the
/// `BlockingIO` lane has one thread per core and libdispatch adds none while they sleep in a
/// system call, so a verification queued there waited for every download's fsync.
@Suite("Downloads: verifying a .part beside blocked disk work", .timeLimit(.minutes(2)))
struct PartVerifierTests {
    @Test("a .part is verified while every BlockingIO thread is held by blocking work")
    func verifiesWhileBlockingIOIsHeld() async throws {
        let body = SyntheticImages.jpeg(width: 640, height: 480, seed: 9)
        let path = NSTemporaryDirectory() + "icpv-\(UUID().uuidString).jpg.part"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(body)))
        defer { unlink(path) }

        // Far more blockers than the lane has threads; wait until its threads are all held.
        let threads = ProcessInfo.processInfo.activeProcessorCount
        let gate = DispatchSemaphore(value: 0)
        let (entered, entry) = AsyncStream.makeStream(of: Void.self)
        let blockers = (0..<(threads * 4)).map { _ in
            Task { await BlockingIO.run { entry.yield(); gate.wait() } }
        }
        defer {
            for _ in blockers { gate.signal() }
        }
        try await withTimeout(seconds: 20) {
            var count = 0
            for await _ in entered {
                count += 1
                if count == threads { break }
            }
        }

        let verifier = PartVerifier(path: path, open: { let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC); return fd >= 0 ? fd : -errno },
                                    available: body.count, maxPixels: Thumbnailer.defaultMaxPixels,
                                    decodes: DecodeBudget(memory: 64 << 20, slots: 2))
        verifier.end(size: body.count)
        let header = try await withTimeout(seconds: 20) { try await verifier.run() }
        #expect(header.format == .jpeg && header.width == 640 && header.height == 480)
    }
}
