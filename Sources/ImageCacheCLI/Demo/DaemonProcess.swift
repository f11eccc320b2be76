import Foundation
import ImageCacheClient
import ImageCacheSupport

/// A real `imagecached` child process for the demo: started with a config file, waited for
/// until its socket answers `hello`, stopped with SIGTERM and its exit status checked.
public final class DaemonProcess: Sendable {
    /// Why the daemon could not be started or stopped cleanly.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    private let child: ChildProcess
    /// The daemon's stderr, for showing its last lines when something fails.
    public let logPath: String
    /// The socket it serves.
    public let socketPath: String

    /// Where `imagecached` is: next to this `imagecache` (the directory of
    /// `CommandLine.arguments[0]`, resolved through `PATH` and symlinks), as `swift build`
    /// and an install both put the two side by side.
    public static func locate(argument0: String = CommandLine.arguments[0],
                              environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        var candidate: String?
        if argument0.contains("/") {
            candidate = argument0
        } else {
            for dir in (environment["PATH"] ?? "").split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/\(argument0)") {
                candidate = "\(dir)/\(argument0)"
                break
            }
        }
        guard let candidate else { return nil }
        let resolved = URL(fileURLWithPath: candidate).resolvingSymlinksInPath()
        let daemon = resolved.deletingLastPathComponent().appendingPathComponent("imagecached").path
        return FileManager.default.isExecutableFile(atPath: daemon) ? daemon : nil
    }

    /// Starts `executable --config configPath`, stdout and stderr to `logPath`. API-key
    /// variables of this environment are removed, so a real key never reaches the loopback
    /// simulator. Started by `ChildSpawn`: no descriptor of this process but 0–2, an empty
    /// signal mask (this process's NIO and dispatch threads block SIGTERM) and default actions.
    public init(executable: String, configPath: String, socketPath: String, logPath: String) throws {
        var environment = ProcessInfo.processInfo.environment
        for key in ["UNSPLASH_ACCESS_KEY", "FLICKR_API_KEY", "PIXABAY_API_KEY", "LISTEN_FDS", "LISTEN_PID", "NOTIFY_SOCKET", "CREDENTIALS_DIRECTORY"] {
            environment[key] = nil
        }
        do {
            child = try ChildProcess(executable, arguments: ["--config", configPath],
                                     environment: environment.map { "\($0.key)=\($0.value)" },
                                     stdout: .file(path: logPath, append: true, mode: 0o600))
        } catch {
            throw Failure(description: "\(error)")
        }
        self.logPath = logPath
        self.socketPath = socketPath
    }

    /// The child's process id.
    public var pid: Int32 { child.pid }

    /// The exit code once the daemon has exited, nil while it runs.
    public var exitStatus: Int32? { child.exitStatus }

    /// Waits until the socket answers `hello`, at most `timeout` seconds; fails at once if the
    /// daemon exits first (a bad config, a socket in use), quoting its log.
    public func waitUntilReady(timeout: Double) async throws -> ImageCacheConnection {
        let deadline = MonotonicClock.now() + timeout
        var pause: UInt64 = 10_000_000
        while true {
            if let status = exitStatus {
                throw Failure(description: "imagecached exited with status \(status) before answering:\n\(logTail())")
            }
            if let connection = try? await ImageCacheConnection.connect(to: socketPath) {
                if (try? await connection.hello()) != nil { return connection }
                await connection.close()
            }
            if MonotonicClock.now() > deadline {
                throw Failure(description: "imagecached did not answer on \(socketPath) within \(Int(timeout)) s:\n\(logTail())")
            }
            try await Task.sleep(nanoseconds: pause)
            pause = min(pause * 2, 200_000_000)
        }
    }

    /// Sends `signal` (SIGHUP: reload the configuration).
    public func signal(_ signal: Int32) {
        child.signal(signal)
    }

    /// Sends SIGTERM and waits (at most `timeout` s, then SIGKILL) for the exit status.
    public func stop(timeout: Double = 15) async -> Int32? {
        child.signal(SIGTERM)
        if let status = await child.exit(within: timeout) { return status }
        child.signal(SIGKILL)  // reaped by the child's waiter thread
        return nil
    }

    /// The daemon log's last lines.
    public func logTail(lines: Int = 15) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).map { "    " + $0 }.joined(separator: "\n")
    }
}
