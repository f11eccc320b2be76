import ImageCacheProtocol
import Testing

@Suite("Default socket path", .timeLimit(.minutes(1)))
struct SocketPathTests {
    @Test("a user daemon binds $XDG_RUNTIME_DIR/imagecached.sock")
    func userDaemon() {
        #expect(SocketPath.daemonDefault(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/imagecached.sock")
        #expect(SocketPath.daemonDefault(environment: ["XDG_RUNTIME_DIR": "/run/user/1000/"]) == "/run/user/1000/imagecached.sock")
    }

    @Test("without a runtime directory the daemon binds the system path")
    func systemDaemon() {
        #expect(SocketPath.daemonDefault(environment: [:]) == "/run/imagecached/imagecached.sock")
        #expect(SocketPath.daemonDefault(environment: ["XDG_RUNTIME_DIR": ""]) == "/run/imagecached/imagecached.sock")
    }

    @Test("a relative XDG_RUNTIME_DIR is ignored, as the XDG spec says")
    func relativeRuntimeDir() {
        #expect(SocketPath.daemonDefault(environment: ["XDG_RUNTIME_DIR": "run"]) == SocketPath.system)
    }

    @Test("a client tries the user socket, then the system one")
    func clientCandidates() {
        #expect(SocketPath.clientCandidates(environment: ["XDG_RUNTIME_DIR": "/run/user/7"]) == ["/run/user/7/imagecached.sock", SocketPath.system])
        #expect(SocketPath.clientCandidates(environment: [:]) == [SocketPath.system])
    }
}
