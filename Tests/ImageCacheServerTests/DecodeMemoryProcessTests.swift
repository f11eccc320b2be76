import DaemonChild
import Foundation
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// The real `imagecached` process under hostile decodes: its peak resident
/// memory (`VmHWM`, read from /proc) stays within `decode_memory` plus the memory formula's other terms (docs/operating.md).
@Suite("imagecached process: decode memory", .serialized, .timeLimit(.minutes(5)))
struct DecodeMemoryProcessTests {
    /// The daemon's peak resident size so far, in bytes.
    private func peakResident(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kib = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kib << 10
    }

    @Test("hostile decodes at once: VmHWM stays within decode_memory + the memory formula's other terms (docs/operating.md)")
    func peakWithinBudget() async throws {
        let images = try await ImageServer.start()
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let decodeMemory = 64 << 20
        try Data("""
            [daemon]
            state_dir = "\(folder)/state"
            [cache]
            cache_dir = "\(folder)/cache"
            [network]
            allowed_hosts = 127.0.0.1
            allow_http = true
            decode_memory = 64MiB
            """.utf8).write(to: URL(fileURLWithPath: folder + "/cache.conf"))
        let socket = folder + "/d.sock"
        let daemon = try DaemonProcess(arguments: ["--config", folder + "/cache.conf", "--socket", socket],
                                       environment: DaemonProcess.environment(home: folder))
        defer { daemon.kill() }
        try await daemon.waitForLog("serving")
        let pid = daemon.pid
        let client = try await RawClient.connect(socket)

        // Idle, after one ordinary thumbnail (the decoders' and the cache's own start-up).
        images.serve("/warm.jpg", body: SyntheticImages.jpeg(width: 600, height: 400))
        let warm = try await client.ask(1, "thumbnail.show", ["slot": 1, "url": images.url("/warm.jpg"), "size": 128])
        #expect(warm.resultObject != nil, "\(warm)")
        let idle = try peakResident(pid)

        // Admitted heavy decodes (≈ 30 MiB each), interlaced 7000² 16-bit PNGs (read whole:
        // ≈ 374 MiB each, never admitted), scan bombs, ordinary thumbnails: all at once.
        var expected: [Int: String] = [:]
        var id = 10
        func request(_ path: String, _ body: [UInt8], _ type: String, _ outcome: String) async throws {
            id += 1
            images.serve(path, body: body, contentType: type)
            expected[id] = outcome
            try await client.send(rpcLine(id, "thumbnail.show", ["slot": id, "url": images.url(path), "size": 128]))
        }
        let bomb = HostileImages.repeatingLastScan(of: try Corpus.bytes("jpeg/libjpeg-turbo/testimgp.jpg"), toTotal: 480)
        for n in 0..<4 {
            try await request("/heavy\(n).png", SyntheticImages.png(width: 2000, height: 2000, seed: UInt64(n + 1)), "image/png", "ok")
            try await request("/png16-\(n).png", HostileImages.png(width: 7000, height: 7000, interlaced: true), "image/png", "too_large")
            try await request("/bomb\(n).jpg", bomb, "image/jpeg", "decode_failed")
            try await request("/small\(n).jpg", SyntheticImages.jpeg(width: 800, height: 600, seed: UInt64(n + 7)), "image/jpeg", "ok")
        }
        let answers = try await client.answers(for: Set(expected.keys))
        for (id, outcome) in expected {
            let answer = try #require(answers[id])
            #expect((answer.resultObject != nil ? "ok" : answer.errorKind) == outcome, "\(id): \(answer)")
        }
        await client.close()

        let peak = try peakResident(pid)
        // The memory formula: max_connections × (100 KiB + 256 KiB) for bodies in flight, up to 16 MiB of
        // malloc slack at the arena's top; the memory tier holds a few KB of thumbnails here.
        let otherTerms = 16 * (356 << 10) + (16 << 20)
        #expect(peak <= idle + decodeMemory + otherTerms,
                "VmHWM \(peak >> 20) MiB, idle \(idle >> 20) MiB, budget \(decodeMemory >> 20) MiB")
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
        await images.shutdown()
    }
}
