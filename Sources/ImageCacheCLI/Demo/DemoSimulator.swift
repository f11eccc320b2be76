import DaemonChild
import Foundation
import ImageCacheSupport

/// The demo's provider simulator: `imagecache-simulator` (the three provider APIs and a paced
/// image host on loopback) run as a child process, so that this command line links none of
/// the image libraries its synthetic photos are made with.
///
/// Started with `DaemonProcess`'s `.announces`: its one JSON line on stdout says where it
/// listens, its stderr is kept for a failure message, and its stdin is a pipe this process
/// holds, so it exits when this process ends, even by SIGKILL. Its keys are the ones
/// `DemoConfig` writes.
struct DemoSimulator: Sendable {
    /// The program's file name.
    static let program = "imagecache-simulator"

    /// The child process.
    let process: DaemonProcess
    /// Where it listens.
    let announced: SimulatorAnnouncement

    /// The base URL the daemon's `api_url`s are built on.
    var baseURL: String { announced.api }
    /// The image host's base URL.
    var imagesURL: String { announced.images }
    /// What both servers saw, as JSON.
    var logURL: String { announced.log }

    /// Where to look for the program, in order: beside this program's executable (a build
    /// folder, or an install that keeps both in one folder), then
    /// `../libexec/imagecached/` relative to it, where the Debian package and
    /// `scripts/install` put it (a helper that is not a user's command stays out of `PATH`).
    /// `executable` is this process's, read from `/proc/self/exe` (whatever `argv[0]` says).
    static func candidates(executable: String? = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) -> [String] {
        guard let executable else { return [] }
        let folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        return [folder.appendingPathComponent(program).path,
                folder.deletingLastPathComponent().appendingPathComponent("libexec/imagecached/\(program)").standardizedFileURL.path]
    }

    /// The first of `candidates` that is an executable file, or a failure naming each place looked at.
    static func locate(candidates: [String] = candidates()) throws -> String {
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        let places = candidates.isEmpty ? "(this program's own path is unknown: /proc/self/exe is unreadable)" : candidates.joined(separator: " or ")
        throw DemoFailure("no \(program) at \(places); build it with `swift build --product \(program)`")
    }

    /// Starts the simulator found by `locate` (or `executable`) and returns once it announced
    /// where it listens, at most `timeout` seconds; on any failure (or cancellation) the
    /// child is stopped before this throws.
    static func start(executable: String? = nil, timeout: Double) async throws -> DemoSimulator {
        let path = try executable ?? locate()
        let process = try DaemonProcess(executable: path, arguments: ["--watch-stdin"],
                                        environment: DaemonProcess.inheritedEnvironment(),
                                        output: .captured, readiness: .announces)
        do {
            let line = try await process.waitForAnnouncement(timeout: timeout)
            do {
                return DemoSimulator(process: process, announced: try SimulatorAnnouncement(line: line))
            } catch {
                throw DemoFailure("\(path) announced \(line.debugDescription), not {api, images, log}: \(error)")
            }
        } catch {
            await process.stop()
            throw error
        }
    }

    /// Stops it (SIGTERM, a bounded wait, then SIGKILL); true when it exited 0.
    @discardableResult
    func shutdown() async -> Bool {
        await process.stop() == 0
    }
}
