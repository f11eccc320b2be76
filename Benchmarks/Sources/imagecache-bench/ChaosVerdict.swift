import Foundation

/// The chaos soak's properties, each PASS/FAIL (or "n/a" for the checks that need a long run),
/// with the bound it was held to; rendered as the run's summary.md. docs/soak.md gives the
/// reason for each bound.
struct ChaosVerdict {
    let minutes: Double
    let long: Bool
    let samples: [ChaosSample]
    let ledger: ChaosLedger.State
    let crashes: [String]
    let plannedKills: Int
    let exitStatus: Int32
    let downloads: DownloadCheck
    let entries: CacheEntryCheck
    /// The daemon's stderr over the whole run (both processes of the planned kill).
    let daemonLog: String
    let idleKiB: Int
    let settings: ChaosDaemon.Settings
    let users: Int
    let bound: Double
    let providerRequests: (requests: Int, faulted: Int)
    let imageRequests: (requests: Int, faulted: Int)
    let events: [String]

    struct Check {
        var name: String
        var bound: String
        var measured: String
        /// nil: not checked in this run (too short).
        var passed: Bool?
    }

    var passed: Bool { checks.allSatisfy { $0.passed != false } }

    /// The error kinds docs/protocol.md allows for a URL download into a download root that
    /// stays where it is: what the network, the image host, the image or the disk did.
    static let downloadFailureKinds: Set<String> = ["network_unavailable", "timeout", "upstream_error", "rate_limited", "not_found",
                                                    "decode_failed", "too_large", "storage_unavailable", "busy", "cancelled"]

    /// Series that must not grow after warm-up: name, value, allowed relative and absolute growth.
    private var flatSeries: [(String, (ChaosSample) -> Double, Double, Double, String)] {
        let nodes: [(String, (ChaosSample) -> Double, Double, Double, String)] = (0..<settings.memcached.count).map { node in
            ("memcached node \(node) connections",
             { Double($0.memcachedConnections.count > node ? max(0, $0.memcachedConnections[node]) : 0) }, 0.5, 4, "")
        }
        let series: [(String, (ChaosSample) -> Double, Double, Double, String)] = [
            ("RSS − memory_limit in effect", { Double($0.rssKiB) / 1024 - Double($0.memoryLimitMiB) }, 0.15, 8, "MiB"),
            ("open fds", { Double($0.fds) }, 0.20, 16, ""),
            ("threads", { Double($0.threads) }, 0.10, 4, ""),
            ("disk cache bytes", { Double($0.diskBytes) / 1_048_576 }, 0.25, 2, "MiB"),
            ("disk cache files", { Double($0.diskEntries) }, 0.25, 200, ""),
            ("SQLite WAL", { Double($0.walBytes) / 1_048_576 }, 1.0, 4, "MiB"),
            // The daemon keeps each owner's newest ended jobs up to a cap, so once the soak has
            // ended that many the table stops growing however many more it starts.
            ("download job table", { Double($0.jobTableBytes) / 1024 }, 0.25, 64, "KiB"),
        ]
        return series + nodes
    }

    var maxEntries: Int { samples.map(\.diskEntries).max() ?? 0 }

    /// The memory formula (docs/operating.md) with this run's settings, in KiB: idle + the larger
    /// memory_limit + max_connections × (100 + 256) KiB + decode_memory + 8 KiB per session
    /// + ≈ 2.5 KiB per disk entry seen (index ≈ 600 B, photo record ≈ 1.3 KiB, dimensions ≈ 600 B)
    /// + 16 MiB of malloc slack.
    var memoryBoundKiB: Int {
        idleKiB + max(settings.memoryLimits.0, settings.memoryLimits.1) * 1024 + settings.maxConnections * 356
            + settings.decodeMemoryMiB * 1024 + users * 2 * 8 + maxEntries * 5 / 2 + 16 * 1024
    }

    var checks: [Check] {
        var checks: [Check] = []
        checks.append(Check(name: "no crash but the planned kill -9", bound: "no unplanned exit; exit status 0 on SIGTERM",
                            measured: "\(crashes.count) unplanned exits, \(plannedKills) planned kills, exit status \(exitStatus)"
                                + (crashes.isEmpty ? "" : ": " + crashes.joined(separator: "; ")),
                            passed: crashes.isEmpty && exitStatus == 0))
        let total = ledger.outcomes.values.reduce(0, +)
        // A URL download into the download root can fail only for what the network, the image or
        // the disk did (or because it was cancelled); `forbidden` would say the destination left
        // the roots, which the soak never does, and `internal` is a bug.
        let wrongKinds = downloads.failedKinds.keys.filter { !Self.downloadFailureKinds.contains($0) }.sorted()
        let wrongJobs = wrongKinds.map { downloads.failedKinds[$0, default: 0] }.reduce(0, +)
        let jobExamples = wrongKinds.compactMap { downloads.failureExamples[$0] }
        checks.append(Check(name: "every request answered or refused with a documented error kind",
                            bound: "0 unexplained (no internal error, no dropped connection outside the planned kill); "
                                + "a download job fails only with \(Self.downloadFailureKinds.sorted().joined(separator: ", "))",
                            measured: "\(total) requests, \(ledger.unexplainedCount) unexplained; \(wrongJobs) jobs failed with another kind"
                                + ((ledger.unexplained + jobExamples).isEmpty ? "" : ": " + (ledger.unexplained.prefix(5) + jobExamples).joined(separator: "; ")),
                            passed: ledger.unexplainedCount == 0 && wrongJobs == 0))
        checks.append(Check(name: "no request hung", bound: "each answered within \(Int(bound)) s; every download ended within \(Int(bound * 2)) s of the end",
                            measured: "\(ledger.hung.count) hung requests, \(downloads.unended.count) unended downloads"
                                + ((ledger.hung + downloads.unended).isEmpty ? "" : ": " + (ledger.hung + downloads.unended).prefix(5).joined(separator: "; ")),
                            passed: ledger.hung.isEmpty && downloads.unended.isEmpty))
        checks.append(Check(name: "every finished download byte-identical to its source", bound: "0 differing, at least 1 finished, no job lost (unknown to the daemon without having been listed ended)",
                            measured: "\(downloads.started) started, \(downloads.finished) finished, \(downloads.identical) identical, "
                                + "\(downloads.cancelled) cancelled, failed \(downloads.failedKinds), \(downloads.unknown) unknown to the daemon "
                                + "(\(downloads.forgotten) ended jobs past its cap checked as last listed)"
                                + (downloads.mismatched.isEmpty ? "" : ": " + downloads.mismatched.prefix(3).joined(separator: "; ")),
                            passed: downloads.mismatched.isEmpty && downloads.finished > 0 && downloads.unknown == 0))
        checks.append(Check(name: "every cache entry decodable after the run", bound: "every JPEG/PNG under data/ decodes (Thumbnailer.validate)",
                            measured: "\(entries.images) images, \(entries.decodable) decodable, \(entries.others) other files (search pages, photo records; .m descriptions where the file system keeps no attributes)"
                                + (entries.failures.isEmpty ? "" : ": " + entries.failures.prefix(3).joined(separator: "; ")),
                            passed: entries.images > 0 && entries.failures.isEmpty))
        let reports = daemonLog.split(separator: "\n").filter {
            $0.contains("WARNING: ThreadSanitizer") || $0.contains("ERROR: AddressSanitizer") || $0.contains("Fatal error")
        }
        checks.append(Check(name: "no sanitizer report or fatal error in the daemon's log", bound: "0 lines of ThreadSanitizer/AddressSanitizer reports or Swift fatal errors (daemon.log)",
                            measured: "\(reports.count)" + (reports.first.map { ": " + $0 } ?? ""), passed: reports.isEmpty))
        let maxRSS = samples.map(\.rssKiB).max() ?? 0
        checks.append(Check(name: "RSS within the memory formula", bound: String(format: "≤ %.1f MiB (idle %.1f + the formula's terms, see docs/soak.md)",
                                                                            Double(memoryBoundKiB) / 1024, Double(idleKiB) / 1024),
                            measured: String(format: "max %.1f MiB", Double(maxRSS) / 1024), passed: maxRSS <= memoryBoundKiB))
        let rest = ChaosLedger.quantile(ledger.restHits, 0.99), fault = ChaosLedger.quantile(ledger.faultHits, 0.99)
        let latencyMeasured = String(format: "p99 %.0f µs at rest (%d hits), %.0f µs under faults (%d hits)", rest ?? -1, ledger.restHits.count,
                                     fault ?? -1, ledger.faultHits.count)
        checks.append(Check(name: "memory-hit p99 under faults", bound: "≤ 2 × p99 at rest (long runs only)", measured: latencyMeasured,
                            passed: long ? (rest != nil && fault != nil && fault! <= 2 * rest!) : nil))
        let n = samples.count
        for (name, value, relative, absolute, unit) in flatSeries {
            let second = samples[min(n, n / 4)..<min(n, n / 2)].map(value), last = samples[min(n, n * 3 / 4)..<n].map(value)
            let q2 = ChaosLedger.quantile(second, 0.5) ?? 0, q4 = ChaosLedger.quantile(last, 0.5) ?? 0
            let limit = q2 * (1 + relative) + absolute
            checks.append(Check(name: "\(name) flat after warm-up",
                                bound: String(format: "last-quarter median ≤ second-quarter median × %.2f + %g %@ (long runs only)", 1 + relative, absolute, unit),
                                measured: String(format: "second quarter %.1f, last quarter %.1f %@ (limit %.1f)", q2, q4, unit, limit),
                                passed: long ? (n >= 8 && q4 <= limit) : nil))
        }
        let jobs = max(1, downloads.started)
        let table = samples.last?.jobTableBytes ?? 0
        checks.append(Check(name: "job table bounded by the jobs it keeps", bound: "≤ 2 KiB per job started (until the cap on ended jobs is reached it grows with downloads by design)",
                            measured: "\(table) bytes for \(downloads.started) jobs (\(table / jobs) B each)", passed: table <= jobs * 2048))
        return checks
    }

    func markdown() -> String {
        var lines = ["# Chaos soak: \(String(format: "%g", minutes)) minutes", ""]
        lines.append("Result: **\(passed ? "PASS" : "FAIL")** (\(long ? "long run: every property checked" : "short run: flatness and latency under faults reported, not checked")).")
        lines.append("")
        lines.append("| property | bound | measured | result |")
        lines.append("|---|---|---|---|")
        for check in checks {
            let result = check.passed.map { $0 ? "PASS" : "FAIL" } ?? "n/a"
            lines.append("| \(check.name) | \(check.bound) | \(check.measured.replacingOccurrences(of: "|", with: "/")) | \(result) |")
        }
        lines.append("")
        lines.append("Faults applied: providers \(providerRequests.faulted) of \(providerRequests.requests) requests, image host \(imageRequests.faulted) of \(imageRequests.requests).")
        lines.append("")
        if !downloads.failureExamples.isEmpty {
            lines.append("Failed download jobs, one of each kind:")
            lines.append("")
            for (kind, example) in downloads.failureExamples.sorted(by: { $0.key < $1.key }) { lines.append("- \(kind): \(example)") }
            lines.append("")
        }
        lines.append("Request outcomes (method outcome: count):")
        lines.append("")
        for (key, count) in ledger.outcomes.sorted(by: { $0.key < $1.key }) { lines.append("- \(key): \(count)") }
        lines.append("")
        lines.append("Events:")
        lines.append("")
        lines.append("```")
        lines += events
        lines.append("```")
        return lines.joined(separator: "\n") + "\n"
    }
}
