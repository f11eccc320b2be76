import Foundation
import ImageCacheClient
import Testing
import TestSupport

@Suite("Connecting when the daemon is not running", .timeLimit(.minutes(1)))
struct NotRunningTests {
    func temporaryFolder() throws -> String {
        var template = Array("/tmp/icc-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        return String(cString: made)
    }

    @Test("a missing socket names the path and how to start the daemon")
    func missingSocket() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/imagecached.sock"
        do {
            _ = try await withTimeout(seconds: 20) { try await ImageCacheConnection.connect(to: path) }
            Issue.record("connected to nothing")
        } catch let error as ImageCacheClientError {
            guard case .daemonNotRunning(let reported, _) = error else { Issue.record("got \(error)"); return }
            #expect(reported == path)
            let text = error.description
            #expect(text.contains(path))
            #expect(text.contains("imagecached"))
            #expect(text.contains("systemctl --user start imagecached.socket"))
        }
    }

    @Test("a stale socket file nobody listens on is reported as not running")
    func staleSocket() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/imagecached.sock"
        // Bind a socket and close it without listening: the file stays, nobody answers.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        close(fd)
        try #require(bound == 0)
        #expect(FileManager.default.fileExists(atPath: path))
        await #expect {
            _ = try await withTimeout(seconds: 20) { try await ImageCacheConnection.connect(to: path) }
        } throws: { error in
            guard case .daemonNotRunning(let reported, let reason)? = error as? ImageCacheClientError else { return false }
            return reported == path && reason.contains("refused")
        }
    }

    @Test("a socket path too long for a Unix address is a clear connect failure")
    func pathTooLong() async throws {
        let path = "/tmp/" + String(repeating: "x", count: 200) + ".sock"
        await #expect {
            _ = try await withTimeout(seconds: 20) { try await ImageCacheConnection.connect(to: path) }
        } throws: { error in
            guard case .connectFailed(let reported, let reason)? = error as? ImageCacheClientError else { return false }
            return reported == path && reason.contains("longer")
        }
    }

    @Test("without --socket the client uses the first candidate that exists")
    func defaultPath() {
        let env = ["XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(ImageCacheConnection.defaultSocketPath(environment: env, fileExists: { _ in false }) == "/run/user/1000/imagecached.sock")
        #expect(ImageCacheConnection.defaultSocketPath(environment: env, fileExists: { $0 == SocketPath.system }) == SocketPath.system)
        #expect(ImageCacheConnection.defaultSocketPath(environment: env, fileExists: { _ in true }) == "/run/user/1000/imagecached.sock")
        #expect(ImageCacheConnection.defaultSocketPath(environment: [:], fileExists: { _ in false }) == SocketPath.system)
    }
}
