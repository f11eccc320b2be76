import Foundation
import Testing
import TestSupport

/// `imagecached --check-config`, run as a real process: the message and exit status an
/// operator (or a packaging script) sees.
@Suite("imagecached --check-config", .timeLimit(.minutes(2)))
struct CheckConfigCommandTests {
    /// The built `imagecached`, next to the test bundle in the build folder.
    static func daemonExecutable() throws -> URL {
        var candidates: [URL] = []
        let bundleDirectory = Bundle.main.bundleURL.deletingLastPathComponent()
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("imagecached"))
        candidates.append(bundleDirectory.appendingPathComponent("imagecached"))
        let argumentDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        candidates.append(argumentDirectory.appendingPathComponent("imagecached"))
        candidates.append(argumentDirectory.deletingLastPathComponent().appendingPathComponent("imagecached"))
        candidates.append(repositoryRoot.appendingPathComponent(".build/debug/imagecached"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: candidates.map(\.path).joined(separator: ", ")])
        }
        return found
    }

    /// Runs `imagecached` with `arguments` in a clean environment and waits for it to exit.
    static func run(_ arguments: [String], environment: [String: String] = ["HOME": "/nonexistent"]) async throws -> ToolOutcome {
        let executable = try daemonExecutable()
        // A build with --enable-code-coverage makes the child write a .profraw file into its
        // working directory; keep it out of the repository.
        let scratch = try TemporaryDirectory()
        var childEnvironment = environment
        childEnvironment["LLVM_PROFILE_FILE"] = scratch.path + "/imagecached-%p.profraw"
        let finalEnvironment = childEnvironment
        defer { withExtendedLifetime(scratch) {} }
        return try await runTool(executable.path, arguments, environment: finalEnvironment, seconds: 60)
    }

    @Test("an unknown key prints FILE:LINE: unknown key 'x' in [section] on stderr and fails")
    func unknownKeyFails() async throws {
        let temp = try TemporaryDirectory()
        let file = try temp.write("bad.conf", "[daemon]\nlog_level = info\n\n[network]\nx = 1\n")
        let outcome = try await Self.run(["--config", file, "--check-config"])
        #expect(outcome.stderr == "\(file):5: unknown key 'x' in [network]\n")
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.status == 78)
    }

    @Test("the repository's cache.conf is ok")
    func repositoryFileIsOK() async throws {
        let file = repositoryRoot.appendingPathComponent("cache.conf").path
        let outcome = try await Self.run(["--config", file, "--check-config"])
        #expect(outcome.stdout == "\(file): ok\n")
        #expect(outcome.stderr.isEmpty)
        #expect(outcome.status == 0)
    }

    @Test("a missing --config file is reported and fails")
    func missingFileFails() async throws {
        let outcome = try await Self.run(["--config", "/nonexistent/cache.conf", "--check-config"])
        #expect(outcome.stderr == "/nonexistent/cache.conf: cannot read: No such file or directory\n")
        #expect(outcome.status == 78)
    }

    @Test("with no file anywhere the defaults are reported ok",
          .enabled(if: !FileManager.default.fileExists(atPath: "/etc/imagecached/cache.conf"), "this machine has a system file"))
    func noFileIsOK() async throws {
        let temp = try TemporaryDirectory()
        let outcome = try await Self.run(["--check-config"], environment: ["XDG_CONFIG_HOME": temp.path])
        #expect(outcome.stdout.hasSuffix("the defaults are ok\n"))
        #expect(outcome.status == 0)
    }

    @Test("an unknown --log-level is refused by the argument parser")
    func badLogLevelRefused() async throws {
        let outcome = try await Self.run(["--log-level", "verbose", "--check-config"])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("verbose"))
    }

    @Test("--help reads like a man page: configuration, environment, signals, files, examples")
    func helpIsAManPage() async throws {
        let outcome = try await Self.run(["--help"])
        #expect(outcome.status == 0)
        for heading in ["CONFIGURATION", "ENVIRONMENT", "SIGNALS", "FILES", "EXAMPLES", "--check-config",
                        "SIGHUP", "CREDENTIALS_DIRECTORY", "XDG_CONFIG_HOME", "/etc/imagecached/cache.conf"] {
            #expect(outcome.stdout.contains(heading), "help lacks \(heading)")
        }
    }
}

/// The places a configuration names, checked by `--check-config` and at every start.
@Suite("imagecached --check-config: the places the file names", .timeLimit(.minutes(2)))
struct CheckConfigPlacesTests {
    /// An environment whose defaults all lie in `folder` (so the check never depends on the
    /// user running the tests).
    static func environment(_ folder: String) -> [String: String] {
        ["HOME": folder, "XDG_RUNTIME_DIR": folder + "/run", "XDG_CACHE_HOME": folder + "/cache"]
    }

    @Test("usable places: ok on stdout, exit 0, and nothing is created")
    func usablePlaces() async throws {
        let temp = try TemporaryDirectory()
        let file = try temp.write("ok.conf", "[downloads]\ndownload_dir = \(temp.path)/a/b, \(temp.path)\n")
        let outcome = try await CheckConfigCommandTests.run(["--config", file, "--check-config"], environment: Self.environment(temp.path))
        #expect(outcome.stdout == "\(file): ok\n")
        #expect(outcome.stderr.isEmpty)
        #expect(outcome.status == 0)
        #expect(!FileManager.default.fileExists(atPath: temp.path + "/a"))
        #expect(!FileManager.default.fileExists(atPath: temp.path + "/cache"))
    }

    @Test("cache_dir, a download root, ca_bundle and the socket's folder: each problem names its key, exit 78")
    func everyProblemReported() async throws {
        let temp = try TemporaryDirectory()
        let blocker = try temp.write("plain-file", "x")
        let file = try temp.write("bad.conf", """
            [daemon]
            socket = \(blocker)/d.sock
            [cache]
            cache_dir = \(blocker)
            [network]
            ca_bundle = \(temp.path)/missing.pem
            [downloads]
            download_dir = \(temp.path)/fine, \(blocker)/sub/folder
            """)
        let outcome = try await CheckConfigCommandTests.run(["--config", file, "--check-config"], environment: Self.environment(temp.path))
        #expect(outcome.status == 78)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr == """
            \(file): cache_dir in [cache]: \(blocker) exists and is not a folder
            \(file): download_dir in [downloads]: \(blocker)/sub/folder cannot be created: \(blocker) is not a folder
            \(file): ca_bundle in [network]: \(temp.path)/missing.pem cannot be read (No such file or directory)
            \(file): socket in [daemon]: the socket \(blocker)/d.sock cannot be created: \(blocker) exists and is not a folder

            """)
    }

    @Test("a ca_bundle that is a folder is refused")
    func bundleIsAFolder() async throws {
        let temp = try TemporaryDirectory()
        let file = try temp.write("bad.conf", "[network]\nca_bundle = \(temp.path)\n")
        let outcome = try await CheckConfigCommandTests.run(["--config", file, "--check-config"], environment: Self.environment(temp.path))
        #expect(outcome.status == 78)
        #expect(outcome.stderr == "\(file): ca_bundle in [network]: \(temp.path) is not a regular file\n")
    }

    @Test("under socket activation the socket's folder is systemd's and is not checked")
    func socketActivatedSkipsSocketFolder() async throws {
        let temp = try TemporaryDirectory()
        let blocker = try temp.write("plain-file", "x")
        let file = try temp.write("ok.conf", "[daemon]\nsocket = \(blocker)/d.sock\n")
        // LISTEN_PID names another process: not activated, so the folder is checked.
        var environment = Self.environment(temp.path)
        environment["LISTEN_FDS"] = "1"
        environment["LISTEN_PID"] = "1"
        let outcome = try await CheckConfigCommandTests.run(["--config", file, "--check-config"], environment: environment)
        #expect(outcome.status == 78)
        #expect(outcome.stderr.contains("socket in [daemon]"))
    }
}
