import DaemonChild

extension DaemonProcess {
    /// The demo's daemon: `executable --config configPath --watch-stdin`, its stdout and
    /// stderr appended to `logPath` (kept in the workspace for the user to read), this
    /// process's environment without API keys or systemd's variables (a real key never reaches
    /// the loopback simulator), and its start awaited on `socketPath` (`waitUntilReady`). Its
    /// stdin is this process's lifeline, so a demo killed, or its terminal closed, leaves no
    /// daemon behind.
    convenience init(executable: String, configPath: String, socketPath: String, logPath: String) throws {
        try self.init(executable: executable, arguments: ["--config", configPath, "--watch-stdin"],
                      environment: DaemonProcess.inheritedEnvironment(),
                      output: .file(path: logPath), readiness: .answers(socketPath: socketPath), lifeline: true)
    }
}
