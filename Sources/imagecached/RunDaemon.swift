import ArgumentParser
import Foundation
import ImageCacheConfig
import ImageCacheKit
import ImageCacheServer
import Logging

/// Runs the daemon with a loaded, validated configuration until SIGTERM/SIGINT.
///
/// - Parameters:
///   - configuration: the configuration with the command line's overrides applied.
///   - watchStdin: `--watch-stdin`: the end of stdin stops the daemon as SIGTERM does.
///   - reload: reads the configuration again for SIGHUP, with the same file and the same
///     command-line overrides (so `--socket` and `--log-level` survive a reload).
/// - Throws: `ExitCode(78)` after printing why when the configuration keeps the daemon from
///   starting (`socket_group` unknown, a socket path that is not a socket, something at the
///   cache index's path that cannot be moved aside), `ExitCode(1)` when something else does
///   (socket in use, cache folder or its job table held by another daemon). A clean stop
///   returns, and the process exits 0.
func runDaemon(configuration: CacheConfiguration, watchStdin: Bool = false,
               reload: (@Sendable () throws -> CacheConfiguration)? = nil) async throws {
    // Before any other thread reads the environment: systemd's variables are for us alone.
    let inherited: ListeningSocket?
    do {
        inherited = try SocketActivation.takeInheritedSocket()
    } catch {
        FileHandle.standardError.write(Data("imagecached: \(error)\n".utf8))
        throw ExitCode(1)
    }
    // Before anything opens a descriptor or sizes a budget from the limit.
    let descriptors = DescriptorLimit.raiseToHardLimit()
    let level = LogLevelControl(configuration.daemon.logLevel)
    DaemonLogHandler.bootstrap(control: level, environment: ProcessInfo.processInfo.environment)
    let logger = Logger(label: "imagecached")
    if let descriptors, descriptors < DescriptorLimit.recommended {
        // Under the unit's SystemCallFilter=~@resources setrlimit() is refused: LimitNOFILE= decides.
        logger.warning("the open-file limit is low: clients beyond it wait and work needing a descriptor answers busy (set LimitNOFILE=)",
                       metadata: ["limit": "\(descriptors)", "recommended": "\(DescriptorLimit.recommended)"])
    }
    do {
        let daemon = try ImageCacheDaemon(
            configuration: configuration,
            logger: logger,
            options: ImageCacheDaemon.Options(
                environment: ProcessInfo.processInfo.environment,
                reload: reload,
                logLevel: level,
                inheritedSocket: inherited,
                watchStdin: watchStdin))
        // One daemon per process here: its registry may be the global swift-metrics backend.
        daemon.metrics.bootstrapProcessWide()
        try await daemon.run()
    } catch let error as DaemonStartError {
        logger.critical("cannot start: \(error)")
        throw ExitCode(error.isConfigurationError ? ImageCacheDaemonCommand.configurationErrorStatus : 1)
    }
}
