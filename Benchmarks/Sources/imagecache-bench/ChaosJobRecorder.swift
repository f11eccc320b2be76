import Foundation
import ImageCacheClient
import ImageCacheSupport

/// The last state of every download job the daemon listed while it was listed. The daemon
/// keeps only each uid's newest ended jobs (docs/protocol.md, `download.list`), so an hour's
/// downloads outgrow its table and the check at the end cannot ask it about the early ones;
/// polling `download.list` far faster than the cap's worth of jobs can end records how each
/// of them ended before it was dropped. A job that was never seen ended and is unknown at the
/// end is lost, not forgotten.
final class ChaosJobRecorder: Sendable {
    private let ended = LockedState<[String: DownloadJob]>([:])
    private let socket: String
    private let interval: Duration

    init(socket: String, interval: Duration = .seconds(2)) {
        self.socket = socket
        self.interval = interval
    }

    /// Every ended job seen, by id.
    var endedJobs: [String: DownloadJob] { ended.withLock { $0 } }

    /// Polls until `stop` says so, reconnecting after the planned kill (each call bounded).
    func run(until stop: @escaping @Sendable () -> Bool) async {
        var connection: ImageCacheConnection?
        while !stop() && !Task.isCancelled {
            do {
                let live: ImageCacheConnection
                if let connection { live = connection } else { live = try await ImageCacheConnection.connect(to: socket) }
                connection = live
                let listed = try await withDeadline(30, "download.list for the job recorder") { try await live.downloads() }
                ended.withLock { table in
                    for job in listed.jobs where job.state == .finished || job.state == .failed || job.state == .cancelled {
                        table[job.job] = job
                    }
                }
            } catch {
                await connection?.close()
                connection = nil
            }
            try? await Task.sleep(for: interval)
        }
        await connection?.close()
    }
}
