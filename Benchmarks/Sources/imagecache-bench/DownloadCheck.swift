import Foundation
import ImageCacheClient
import ProviderSimulator

/// After the chaos soak: every download job the clients started, waited for (bounded) and
/// checked. A finished file must be byte-identical to what the image host serves at its URL
/// (the simulator's pictures are deterministic, so the source is made again here); a failed
/// job must carry a documented error kind. A job the daemon no longer keeps (its cap on ended
/// jobs) is checked as `ChaosJobRecorder` last saw it listed; one never seen ended is lost.
struct DownloadCheck {
    var started = 0
    var finished = 0
    var identical = 0
    var mismatched: [String] = []
    var failedKinds: [String: Int] = [:]
    /// One failed job's error per kind, verbatim.
    var failureExamples: [String: String] = [:]
    var cancelled = 0
    var unknown = 0
    /// Ended jobs the daemon had dropped by the end (its cap), checked as last listed.
    var forgotten = 0
    var unended: [String] = []
    var seconds = 0.0

    static func run(jobs: [(job: String, url: String)], recorded: [String: DownloadJob], socket: String,
                    bound: Double) async -> DownloadCheck {
        var check = DownloadCheck(started: jobs.count)
        let start = ContinuousClock.now
        var connection: ImageCacheConnection?
        for _ in 0..<50 where connection == nil {
            connection = try? await ImageCacheConnection.connect(to: socket)
            if connection == nil { try? await Task.sleep(for: .milliseconds(200)) }
        }
        guard let connection else {
            check.unended = jobs.map { "\($0.job): cannot connect to check it" }
            return check
        }
        for (job, url) in jobs {
            while true {
                let status: DownloadJob
                do {
                    // Bounded, so a daemon that stops answering ends the check instead of hanging it.
                    status = try await withDeadline(bound, "download.status of \(job)") {
                        try await connection.downloadStatus(job: job)
                    }
                } catch let error as RPCError where error.kind == .notFound {
                    if let last = recorded[job] {
                        check.forgotten += 1
                        check.settle(last, url: url)
                    } else {
                        check.unknown += 1
                    }
                    break
                } catch {
                    check.unended.append("\(job): download.status failed: \(error)")
                    break
                }
                if check.settle(status, url: url) { break }
                guard (ContinuousClock.now - start) / .seconds(1) < bound else {
                    check.unended.append("\(job) \(url): still \(status.state.rawValue) after \(Int(bound)) s (\(status.received) bytes)")
                    break
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        await connection.close()
        check.seconds = (ContinuousClock.now - start) / .seconds(1)
        return check
    }

    /// Counts an ended job (finished: its file checked against the source; failed: its kind;
    /// cancelled); false for one still running.
    @discardableResult
    private mutating func settle(_ status: DownloadJob, url: String) -> Bool {
        switch status.state {
        case .finished:
            finished += 1
            let path = URL(string: url)?.path ?? ""
            let source = SimulatedImageRoute.handle(SimulatedRequest(method: "GET", uri: path, headers: [], body: []))?.body
            let saved = status.path.flatMap { FileManager.default.contents(atPath: $0) }.map { [UInt8]($0) }
            if let source, saved == source {
                identical += 1
            } else {
                mismatched.append("\(status.job) \(url) → \(status.path ?? "no path"): \(saved?.count ?? -1) bytes saved, \(source?.count ?? -1) at the source")
            }
            return true
        case .failed:
            let kind = status.error?.kind.rawValue ?? "no error"
            failedKinds[kind, default: 0] += 1
            if failureExamples[kind] == nil {
                failureExamples[kind] = "\(status.job) \(url) → \(status.path ?? "no path"): \(status.error.map { "\($0)" } ?? "no error")"
            }
            return true
        case .cancelled:
            cancelled += 1
            return true
        default:
            return false
        }
    }
}
