import ArgumentParser
import Foundation
import ImageCacheConfig
import ImageCacheKit
import ImageCacheProtocol
import ImageCacheSupport
import Logging

/// `imagecached`: reads the configuration, applies the command line's overrides, then either
/// reports whether the configuration is valid (`--check-config`) or runs the daemon.
///
/// Configuration errors — in the file, or in the places it names (`ConfigurationCheck`) — are printed exactly as `FILE:LINE: message` on stderr and exit with
/// status 78 (EX_CONFIG from sysexits.h), which systemd units can list in
/// `RestartPreventExitStatus=` so a broken file is not restarted in a loop.
struct ImageCacheDaemonCommand: AsyncParsableCommand {
    /// EX_CONFIG: the configuration is wrong; restarting will not help.
    static let configurationErrorStatus: Int32 = 78

    static let configuration = CommandConfiguration(
        commandName: "imagecached",
        abstract: "Search photo providers, download images and serve a shared thumbnail cache over a Unix socket.",
        usage: """
            imagecached [--config FILE] [--socket PATH] [--log-level LEVEL]
                        [--watch-stdin] [--check-config]
            """,
        discussion: DaemonHelp.discussion,
        version: ImageCacheVersion.current
    )

    @Option(name: .long, help: ArgumentHelp("Read the configuration from FILE instead of looking it up.", valueName: "FILE"), completion: .file())
    var config: String?

    @Option(name: .long, help: ArgumentHelp("Listen on the Unix socket PATH (overrides socket = in cache.conf).", valueName: "PATH"), completion: .file())
    var socket: String?

    @Option(name: .long, help: ArgumentHelp("Log at LEVEL and above (overrides log_level = in cache.conf).", valueName: "LEVEL"))
    var logLevel: LogLevelArgument?

    @Flag(name: .long, help: "Stop as on SIGTERM when stdin ends: for a parent that holds a pipe there while it lives (the demo).")
    var watchStdin = false

    @Flag(name: .long, help: "Validate the configuration, print 'FILE: ok' or the first error, and exit.")
    var checkConfig = false

    /// Whether systemd passes this process its listening socket (`LISTEN_FDS` for our pid).
    static func isSocketActivated(_ environment: [String: String]) -> Bool {
        guard let fds = environment["LISTEN_FDS"].flatMap(Int.init), fds > 0 else { return false }
        return environment["LISTEN_PID"].flatMap(Int32.init) == getpid()
    }

    /// systemd (252) gives `LoadCredential=` files to the service's own processes but not to
    /// its `ExecReload=` commands, which see `$CREDENTIALS_DIRECTORY` and cannot enter it. A
    /// reload cannot change the keys anyway (systemd reads them once, at start), so the check
    /// leaves them out there instead of failing every reload; a real start still fails on an
    /// unreadable credential. Returns the note to print, nil when the folder can be entered.
    static func dropUnreachableCredentials(_ environment: inout [String: String]) -> String? {
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty,
              access(directory, X_OK) != 0, errno == EACCES else { return nil }
        environment["CREDENTIALS_DIRECTORY"] = nil
        return "note: \(directory) ($CREDENTIALS_DIRECTORY) cannot be entered by this process (systemd gives credentials"
            + " to the service, not to ExecReload=): the keys there are not checked; the running daemon keeps those it started with"
    }

    mutating func validate() throws {
        if watchStdin, !StdinLifeline.stdinIsPipe {
            throw ValidationError("--watch-stdin needs stdin to be a pipe that the parent holds open while it lives")
        }
        // Absolute from here on: the path is what the log and `--check-config` name, and the
        // reload (SIGHUP) reads it again whatever the working folder is then.
        if let config, !config.hasPrefix("/"), !config.isEmpty {
            self.config = URL(fileURLWithPath: config, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath,
                                                                    isDirectory: true)).standardizedFileURL.path
        }
        if let socket {
            guard !socket.isEmpty else { throw ValidationError("--socket needs a path") }
            let absolute = socket.hasPrefix("/") ? socket : FileManager.default.currentDirectoryPath + "/" + socket
            guard absolute.utf8.count <= 107 else {
                throw ValidationError("--socket path is longer than 107 bytes, the limit of a Unix socket address")
            }
            self.socket = absolute
        }
    }

    mutating func run() async throws {
        var seen = ProcessInfo.processInfo.environment
        if checkConfig, let note = Self.dropUnreachableCredentials(&seen) {
            FileHandle.standardError.write(Data("\(note)\n".utf8))
        }
        let environment = seen
        var configuration: CacheConfiguration
        do {
            configuration = try CacheConfiguration.load(explicitPath: config, environment: environment)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(Self.configurationErrorStatus)
        }
        let overrides = CommandLineOverrides(socket: socket, logLevel: logLevel?.level)
        overrides.apply(to: &configuration)

        // What start-up would trip on (folders, files, the socket's folder): the same check for
        // --check-config (the units' ExecStartPre= and ExecReload=) and for a real start.
        let problems = ConfigurationCheck.problems(of: configuration, socketActivated: Self.isSocketActivated(environment),
                                                   environment: environment)
        if !problems.isEmpty {
            for problem in problems { FileHandle.standardError.write(Data("\(problem)\n".utf8)) }
            throw ExitCode(Self.configurationErrorStatus)
        }
        if checkConfig {
            if let path = configuration.sourcePath {
                print("\(path): ok")
            } else {
                let tried = CacheConfiguration.searchPaths(explicitPath: nil, environment: environment)
                print("no configuration file (looked at \(tried.joined(separator: ", "))): the defaults are ok")
            }
            return
        }
        let explicitPath = config
        try await runDaemon(configuration: configuration, watchStdin: watchStdin) {
            var fresh = try CacheConfiguration.load(explicitPath: explicitPath, environment: environment)
            overrides.apply(to: &fresh)
            return fresh
        }
    }
}

/// What the command line sets over the file, kept so that a SIGHUP reload applies it again.
struct CommandLineOverrides: Sendable {
    var socket: String?
    var logLevel: Logger.Level?

    func apply(to configuration: inout CacheConfiguration) {
        if let socket { configuration.daemon.socket = socket }
        if let logLevel { configuration.daemon.logLevel = logLevel }
    }
}

/// swift-log's level names as a command-line value, so `--help` lists them and a wrong one is
/// refused by the parser with the valid choices.
enum LogLevelArgument: String, CaseIterable, ExpressibleByArgument {
    case trace, debug, info, notice, warning, error, critical

    /// The swift-log level of the same name.
    var level: Logger.Level { Logger.Level(rawValue: rawValue) ?? .info }
}
