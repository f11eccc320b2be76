import ArgumentParser
import Foundation
import ImageCacheClient
import Testing
import TestSupport
@testable import ImageCacheCLI

@Suite("Daemon not running", .timeLimit(.minutes(1)))
struct DaemonNotRunningTests {
    /// A socket path in a fresh temporary folder, where nothing listens.
    func missingSocket() throws -> (dir: URL, path: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("icli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return (dir, dir.appendingPathComponent("imagecached.sock").path)
    }

    @Test func connectingToAMissingSocketNamesThePathAndHowToStart() async throws {
        let (dir, path) = try missingSocket()
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            let connection = try await withTimeout(seconds: 20) { try await ImageCacheConnection.connect(to: path) }
            await connection.close()
            Issue.record("connected to a socket that does not exist")
        } catch {
            let message = ErrorMessage.render(error)
            #expect(message.contains(path))
            #expect(message.contains("not running"))
            #expect(message.contains("imagecached"))
            #expect(message.contains("systemctl --user start"))
            #expect(ExitStatus(error: error) == .daemonNotRunning)
        }
    }

    @Test func aCommandAgainstAMissingSocketExitsWithTheDaemonNotRunningCode() async throws {
        let (dir, path) = try missingSocket()
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            try await withTimeout(seconds: 20) {
                let command = try StatusCommand.parse(["--socket", path])
                try await command.run()
            }
            Issue.record("status succeeded without a daemon")
        } catch let exit as ExitCode {
            #expect(exit.rawValue == ExitStatus.daemonNotRunning.rawValue)
        }
    }

    @Test func aStaleSocketFileIsReportedAsNotRunning() async throws {
        let (dir, path) = try missingSocket()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A bound socket that nobody listens on: what a crashed daemon leaves behind.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            path.utf8CString.withUnsafeBytes { raw.copyMemory(from: $0) }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        do {
            let connection = try await withTimeout(seconds: 20) { try await ImageCacheConnection.connect(to: path) }
            await connection.close()
            Issue.record("connected to a socket nobody listens on")
        } catch {
            #expect(ExitStatus(error: error) == .daemonNotRunning)
            #expect(ErrorMessage.render(error).contains("stale"))
        }
    }
}
