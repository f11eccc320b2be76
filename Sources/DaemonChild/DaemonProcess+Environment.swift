import Foundation

extension DaemonProcess {
    /// Variables never handed down to a daemon this process starts: provider API keys (a real
    /// key must not reach a loopback simulator, nor be spent by a benchmark) and what systemd
    /// gave this process (sockets, a notification socket, credentials), which are not the
    /// child's.
    public static let withheldVariables = [
        "UNSPLASH_ACCESS_KEY", "FLICKR_API_KEY", "PIXABAY_API_KEY",
        "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "CREDENTIALS_DIRECTORY",
    ]

    /// `environment` (by default this process's) without `withheldVariables`, with `adding`
    /// on top: the environment for a daemon started by the demo or a benchmark.
    public static func inheritedEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment,
                                            adding: [String: String] = [:]) -> [String: String] {
        var environment = environment
        for key in withheldVariables { environment[key] = nil }
        return environment.merging(adding) { $1 }
    }

    /// Where `imagecached` is: next to the program `argument0` names (resolved through `PATH`
    /// and symlinks), as `swift build` and an install both put `imagecache` and
    /// `imagecached` side by side. Nil when there is none.
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
}
