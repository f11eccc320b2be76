import Foundation
@testable import ImageCacheKit
import ImageCacheSupport
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `kill -9` at random moments of a writing child process, many times over one folder.
@Suite("Caching: crash safety", .timeLimit(.minutes(5)))
struct DiskCacheCrashTests {
    typealias T = CacheTesting

    /// The same content the child writes for entry `index` (see Sources/cache-crash-writer).
    static func expectedBytes(_ index: Int) -> Data {
        var state = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15 | 1
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        let count = 1024 + Int(next() % (95 * 1024))
        var out = [UInt8](repeating: 0, count: count)
        for i in 0..<count { out[i] = UInt8(truncatingIfNeeded: next()) }
        return Data(out)
    }

    static func key(_ index: Int) -> CacheKey {
        CacheKey.thumbnail(url: "https://crash.test/\(index).jpg", width: 64)
    }

    /// The built `cache-crash-writer`, beside the test binary (SwiftPM puts every product of
    /// a build in one folder; the test target depends on the writer so it is built first).
    static func writerBinary() throws -> String {
        var candidates: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append((exe as NSString).deletingLastPathComponent)
        }
        var arguments = CommandLine.arguments
        while !arguments.isEmpty {
            let argument = arguments.removeFirst()
            if argument.hasSuffix(".xctest") { candidates.append((argument as NSString).deletingLastPathComponent) }
        }
        for folder in candidates {
            var dir = folder
            // The bundle may be a folder (`…xctest/`) a level or two below the products.
            for _ in 0..<4 {
                let path = dir + "/cache-crash-writer"
                if FileManager.default.isExecutableFile(atPath: path) { return path }
                dir = (dir as NSString).deletingLastPathComponent
            }
        }
        throw CrashTestError(message: "cache-crash-writer not found near \(candidates)")
    }

    struct CrashTestError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Reads lines from `fd` until `count` lines with a number arrived (returned), bounded by
    /// `timeout` seconds of waiting for the child's output (poll, not sleep).
    static func readAcknowledgements(_ fd: Int32, count: Int, timeout: Double, into buffer: inout [UInt8],
                                     acknowledged: inout Set<Int>, removed: inout Set<Int>) throws {
        var seen = 0
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while seen < count {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw CrashTestError(message: "writer too slow: \(seen)/\(count) puts") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(remaining * 1000))
            if ready <= 0 { continue }
            let n = read(fd, &chunk, chunk.count)
            guard n > 0 else { throw CrashTestError(message: "writer exited early") }
            buffer += chunk[0..<n]
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                if line.hasPrefix("removed "), let index = Int(line.dropFirst(8)) {
                    removed.insert(index)
                    acknowledged.remove(index)
                } else if let index = Int(line) {
                    acknowledged.insert(index)
                    removed.remove(index)
                    seen += 1
                }
            }
        }
    }

    /// What one killed writer acknowledged before its death.
    struct KilledRound: Sendable {
        var killedBySignal: Bool
        var acknowledged: Set<Int>
        var removed: Set<Int>
    }

    @Test("after SIGKILL at random moments, reopening serves only complete entries and the accounting is right")
    func killedWriterLeavesOnlyCompleteEntries() async throws {
        let binary = try Self.writerBinary()
        let folder = TemporaryFolder("crash")
        defer { folder.remove() }
        var generator = SystemRandomNumberGenerator()
        var acknowledged = Set<Int>()
        var removed = Set<Int>()
        var next = 0
        let rounds = 16
        for round in 0..<rounds {
            // Half the rounds run under a small limit, so kills also land inside evictions.
            let limit = round % 2 == 0 ? 1 << 30 : 1 << 20
            let wanted = Int.random(in: 1...25, using: &generator)
            let first = next
            let path = folder.path
            // The child is run, read and killed off the concurrency pool: these waits block.
            let outcome = try await offCooperativePool { () throws -> KilledRound in
                let output = try CloseOnExecPipe()
                let pid: pid_t
                do {
                    pid = try ChildSpawn.start(binary, arguments: [path, String(first), String(limit)],
                                               environment: ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" },
                                               stdin: .null, stdout: .descriptor(output.write), stderr: .descriptor(STDERR_FILENO))
                } catch {
                    close(output.read)
                    close(output.write)
                    throw error
                }
                close(output.write)
                defer { close(output.read) }
                var buffer: [UInt8] = []
                var thisRound = Set<Int>()
                var removedThisRound = Set<Int>()
                do {
                    try Self.readAcknowledgements(output.read, count: wanted, timeout: 60, into: &buffer,
                                                  acknowledged: &thisRound, removed: &removedThisRound)
                } catch {
                    kill(pid, SIGKILL)
                    _ = ChildSpawn.waitForExit(pid)
                    throw error
                }
                kill(pid, SIGKILL)
                let status = ChildSpawn.waitForExit(pid)
                // Lines already in the pipe are acknowledged puts too (the child is gone, so the
                // pipe ends).
                var chunk = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = chunk.withUnsafeMutableBytes { read(output.read, $0.baseAddress, $0.count) }
                    if count < 0, errno == EINTR { continue }
                    if count <= 0 { break }
                    buffer += chunk[0..<count]
                }
                for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") {
                    if line.hasPrefix("removed "), let index = Int(line.dropFirst(8)) {
                        removedThisRound.insert(index)
                        thisRound.remove(index)
                    } else if let index = Int(line) {
                        thisRound.insert(index)
                        removedThisRound.remove(index)
                    }
                }
                return KilledRound(killedBySignal: status == 128 + SIGKILL, acknowledged: thisRound, removed: removedThisRound)
            }
            #expect(outcome.killedBySignal)
            let thisRound = outcome.acknowledged
            let removedThisRound = outcome.removed
            let highest = (thisRound.max() ?? next) + 2
            if limit > 1 << 20 {
                acknowledged.formUnion(thisRound)
            } else {
                // Under the small limit anything may have been evicted.
                acknowledged.removeAll()
            }
            removed.formUnion(removedThisRound)
            acknowledged.subtract(removedThisRound)
            // The kill may land between a removal's commit and its "removed" line.
            if let last = thisRound.max(), last % 11 == 0 { acknowledged.remove(last - 3) }

            let cache = try DiskCache(directory: folder.path, limit: 1 << 30, pathGrace: .seconds(0),
                                      logger: T.logger, sweep: true)
            try await withTimeout(seconds: 60) { await cache.waitForSweep() }
            // Every entry served is complete and exactly what was written.
            var served = 0
            for index in 0...highest {
                if let hit = cache.get(Self.key(index), wantPath: false) {
                    served += 1
                    #expect(hit.bytes == Self.expectedBytes(index), "round \(round): entry \(index) is damaged")
                }
            }
            // Every acknowledged entry of a round without eviction is there.
            for index in acknowledged {
                #expect(cache.contains(Self.key(index)), "round \(round): acknowledged entry \(index) lost")
            }
            // The accounting matches the files: content plus description per entry, nothing else.
            let stats = cache.statistics
            let files = T.dataFiles(in: folder.path)
            #expect(stats.entries == served)
            #expect(files.count == T.filesPerEntry(cache) * stats.entries, "round \(round)")
            #expect(T.storedBytes(in: folder.path) == stats.bytes, "round \(round)")
            cache.close()
            next = highest + 1
        }
    }
}
