import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// A command that talks to the daemon: connect, run, and turn any failure into a message on
/// stderr (or `{"error": …}` with `--json`) and the exit status of `ExitStatus`.
///
/// Every command but `demo` is one of these, so the daemon-not-running message and the
/// exit codes are the same everywhere.
public protocol ClientCommand: AsyncParsableCommand {
    /// `--socket` and `--json`.
    var global: GlobalOptions { get }
    /// The command's work on an open connection.
    func run(connection: ImageCacheConnection) async throws
}

extension ClientCommand {
    public func run() async throws {
        try await Output.$verbosity.withValue(global.verbosity) {
            let choice = global.socketChoice()
            Output.detail("socket \(choice.path) (\(choice.source))")
            if let problem = choice.configProblem { Output.detail("cache.conf not used: \(problem)") }
            let started = MonotonicClock.now()
            do {
                let connection: ImageCacheConnection
                do {
                    connection = try await ImageCacheConnection.connect(to: choice.path)
                } catch {
                    throw Self.explain(error, choice: choice)
                }
                do {
                    try await run(connection: connection)
                } catch {
                    await connection.close()
                    throw error
                }
                await connection.close()
                Output.detail("done in \(Units.seconds(MonotonicClock.now() - started))")
            } catch let exit as ExitCode {
                throw exit
            } catch {
                throw CommandFailure.report(error, global: global)
            }
        }
    }

    /// A connect failure with what the path really is: a file or a folder is not "no daemon"
    /// but a wrong path, and a cache.conf that could not be read is why the default was tried.
    static func explain(_ error: any Error, choice: SocketLookup.Choice) -> any Error {
        guard let client = error as? ImageCacheClientError else { return error }
        switch client {
        case .daemonNotRunning(let path, let reason), .connectFailed(let path, let reason):
            if let wrong = SocketLookup.notASocket(path) {
                return ImageCacheClientError.connectFailed(socketPath: path, reason: wrong + " (from \(choice.source))")
            }
            if let problem = choice.configProblem, case .daemonNotRunning = client {
                return ImageCacheClientError.daemonNotRunning(socketPath: path, reason: reason + "; cache.conf was not used: " + problem)
            }
            return error
        default:
            return error
        }
    }
}

/// Reporting a failure the same way from every command.
public enum CommandFailure {
    /// Writes the message (stderr) or JSON error (stdout) and returns the exit code to throw.
    public static func report(_ error: any Error, global: GlobalOptions) -> ExitCode {
        let error = (error as? Interrupted).map { _ in CancellationError() as any Error } ?? error
        if global.ndjson {
            Output.line(JSONOutput.compactErrorText(error))
        } else if global.json {
            Output.line(JSONOutput.errorText(error))
        }
        Output.error(ErrorMessage.render(error))
        return ExitCode(ExitStatus(error: error).rawValue)
    }
}
