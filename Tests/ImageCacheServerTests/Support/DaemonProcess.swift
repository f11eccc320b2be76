import DaemonChild
import Foundation
import TestSupport

/// The tests' daemon: the one built beside the test bundle, in a minimal environment, its
/// stderr captured line by line so a test waits for a log event instead of sleeping.
extension DaemonProcess {
    /// The built daemon, next to the test bundle (debug, or the TSan scratch path).
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imagecached")
    }

    /// A minimal environment: no API keys, no XDG folders of the machine.
    static func environment(home: String, extra: [String: String] = [:]) -> [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_CACHE_HOME": home + "/cache",
                           "XDG_STATE_HOME": home + "/state"]
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Starts `executable arguments…` (the daemon, or a wrapper such as
    /// `systemd-socket-activate` that execs it), its stderr captured.
    convenience init(executable: URL = DaemonProcess.executable, arguments: [String], environment: [String: String]) throws {
        try self.init(executable: executable.path, arguments: arguments, environment: environment, output: .captured)
    }

    /// Waits until a log line contains `text` (one already logged counts), at most `timeout`
    /// seconds (× `timeoutScale` under the sanitizer).
    func waitForLog(_ text: String, timeout: Double = 60) async throws {
        try await waitForLog(text, within: timeout * timeoutScale)
    }

    /// The exit status, once the process has exited (at most `timeout` seconds: then
    /// `TimeoutError`) and its stderr has been read to the end (bounded too), so `log` then
    /// holds its last lines.
    func waitForExit(timeout: Double = 60) async throws -> Int32 {
        guard let status = await exit(within: timeout) else { throw TimeoutError(seconds: timeout) }
        return status
    }
}
