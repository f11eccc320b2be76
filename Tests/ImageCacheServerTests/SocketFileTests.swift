import Foundation
import Glibc
import ImageCacheServer
import Logging
import Testing
import TestSupport

/// The socket file: its mode, its group, and the probe that never replaces a live daemon's
/// socket but does clear a stale one (docs/protocol.md, "Transport").
@Suite("Socket file", .timeLimit(.minutes(2)))
struct SocketFileTests {
    private func mode(of path: String) -> (mode: mode_t, gid: gid_t)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (info.st_mode & 0o7777, info.st_gid)
    }

    @Test("the socket is created with mode 0600")
    func mode0600() async throws {
        try await TestServer.with { server in
            #expect(mode(of: server.path)?.mode == 0o600)
        }
    }

    @Test("with socket_group the socket is 0660 and owned by that group")
    func group0660() async throws {
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/g.sock"
        let groupID = getegid()
        let name = try #require(getgrgid(groupID).map { String(cString: $0.pointee.gr_name) })
        let listener = try SocketBinder.bind(path: path, group: name, logger: TestServer.logger)
        defer { close(listener.descriptor) }
        listener.releaseLock()
        #expect(mode(of: path)?.mode == 0o660)
        #expect(mode(of: path)?.gid == groupID)
    }

    @Test("an unknown socket_group stops start-up with a message naming it")
    func unknownGroup() throws {
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect {
            _ = try SocketBinder.bind(path: folder + "/x.sock", group: "no-such-group-imagecached", logger: TestServer.logger)
        } throws: { error in
            "\(error)".contains("no-such-group-imagecached")
        }
    }

    @Test("a live daemon's socket is never replaced; start-up fails with a clear message")
    func liveSocketKept() async throws {
        try await TestServer.with { server in
            #expect(try SocketBinder.probe(path: server.path) == .live)
            #expect {
                _ = try SocketBinder.bind(path: server.path, group: nil, logger: TestServer.logger)
            } throws: { error in
                guard case DaemonStartError.socketInUse = error else { return false }
                return "\(error)".contains("already serving")
            }
            // The running daemon still answers.
            let client = try await server.connect()
            let hello = try await client.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
            #expect(hello.resultObject != nil)
            await client.close()
        }
    }

    @Test("a stale socket file (nobody listening) is removed and replaced")
    func staleSocketReplaced() async throws {
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/s.sock"
        // A socket bound and closed without unlinking: what a killed daemon leaves behind.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        close(fd)
        #expect(try SocketBinder.probe(path: path) == .stale)

        let server = RPCServer(router: RPCRouter(), limits: { ServerLimits() }, logger: TestServer.logger)
        let listener = try SocketBinder.bind(path: path, group: nil, logger: TestServer.logger)
        try await server.start(on: listener)
        listener.releaseLock()
        #expect(try SocketBinder.probe(path: path) == .live)
        await server.shutdown(gracePeriod: .seconds(1))
        listener.removeSocketFile()
        #expect(try SocketBinder.probe(path: path) == .absent)
    }

    @Test("a file that is not a socket is left alone and start-up fails")
    func regularFileKept() throws {
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/f.sock"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try SocketBinder.bind(path: path, group: nil, logger: TestServer.logger)
        } throws: { error in
            guard case DaemonStartError.notASocket = error else { return false }
            return true
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")
    }

    @Test("removing the socket file at exit spares a file that is no longer ours")
    func removeOnlyOwnFile() async throws {
        // `with`'s stop after the test's own shutdown only removes the folder (the file at the
        // path is still not ours).
        try await TestServer.with { server in
            await server.server.shutdown(gracePeriod: .seconds(1))
            // Someone else's file appears at the path after we stopped listening.
            unlink(server.path)
            try Data("newer".utf8).write(to: URL(fileURLWithPath: server.path))
            server.listener.removeSocketFile()
            #expect(FileManager.default.fileExists(atPath: server.path))
        }
    }

    @Test("a socket path too long for sockaddr_un is refused with a message")
    func pathTooLong() {
        let path = "/tmp/" + String(repeating: "x", count: 200) + ".sock"
        #expect {
            _ = try SocketBinder.bind(path: path, group: nil, logger: TestServer.logger)
        } throws: { error in
            guard case DaemonStartError.socketPathTooLong = error else { return false }
            return true
        }
    }
}
