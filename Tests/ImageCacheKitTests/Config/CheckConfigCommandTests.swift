import Foundation
import Testing
import TestSupport

/// `imagecached --check-config`, run as a real process: the message and exit status an
/// operator (or a packaging script) sees.
@Suite("imagecached --check-config", .timeLimit(.minutes(2)))
struct CheckConfigCommandTests {
    /// What a finished process printed and returned.
    struct Outcome: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

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
    static func run(_ arguments: [String], environment: [String: String] = ["HOME": "/nonexistent"]) async throws -> Outcome {
        let executable = try daemonExecutable()
        // A build with --enable-code-coverage makes the child write a .profraw file into its
        // working directory; keep it out of the repository.
        let scratch = try TemporaryDirectory()
        var childEnvironment = environment
        childEnvironment["LLVM_PROFILE_FILE"] = scratch.path + "/imagecached-%p.profraw"
        let finalEnvironment = childEnvironment
        defer { withExtendedLifetime(scratch) {} }
        return try await withTimeout(seconds: 60) {
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            process.environment = finalEnvironment
            let out = Pipe().closingOnExec()
            let err = Pipe().closingOnExec()
            process.standardOutput = out
            process.standardError = err
            let status: Int32 = try await withCheckedThrowingContinuation { continuation in
                process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                do { try process.run() } catch { continuation.resume(throwing: error) }
            }
            // The output is small enough to wait in the pipes until the process has exited.
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return Outcome(status: status, stdout: stdout, stderr: stderr)
        }
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
