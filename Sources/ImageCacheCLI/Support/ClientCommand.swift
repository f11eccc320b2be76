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
        let path = global.socketPath()
        do {
            let connection = try await ImageCacheConnection.connect(to: path)
            do {
                try await run(connection: connection)
            } catch {
                await connection.close()
                throw error
            }
            await connection.close()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw CommandFailure.report(error, json: global.json)
        }
    }
}

/// Reporting a failure the same way from every command.
public enum CommandFailure {
    /// Writes the message (stderr) or JSON error (stdout) and returns the exit code to throw.
    public static func report(_ error: any Error, json: Bool) -> ExitCode {
        let error = (error as? Interrupted).map { _ in CancellationError() as any Error } ?? error
        if json { Output.line(JSONOutput.errorText(error)) }
        Output.error(ErrorMessage.render(error))
        return ExitCode(ExitStatus(error: error).rawValue)
    }
}
