import Foundation
import ImageCacheProtocol

/// `imagecache stats` for a person: every figure of the `stats` answer, grouped, with units
/// and the ratios worth knowing (hit rate, fill level, bytes wasted on cancelled transfers).
public enum StatsSummary {
    /// The summary of a `stats` answer as it came over the wire.
    ///
    /// A daemon built without some engine parts reports only the sections it has (a server
    /// alone: `sessions`, `uptimeSeconds`). Such an answer is listed figure by figure, as
    /// sent, with the sections it lacks named, rather than refused or padded with zeros.
    public static func render(_ answer: JSONValue) -> String {
        if let stats = try? answer.decode(as: StatsResult.self) { return render(stats) }
        guard case .object(let sections) = answer else { return "stats: \(answer)" }
        var lines: [String] = []
        if case .double(let up)? = sections["uptimeSeconds"] { lines.append("uptime     \(Units.duration(up))") }
        if case .int(let up)? = sections["uptimeSeconds"] { lines.append("uptime     \(Units.duration(Double(up)))") }
        if case .int(let n)? = sections["sessions"] { lines.append("sessions   \(n) connected") }
        for (path, value) in flatten(sections).sorted(by: { $0.0 < $1.0 }) where path != "uptimeSeconds" && path != "sessions" {
            lines.append("\(path) = \(value)")
        }
        let missing = ["memory", "disk", "network", "providers"].filter { sections[$0] == nil }
        if !missing.isEmpty {
            lines.append("(this daemon reports no \(missing.joined(separator: ", ")) section\(missing.count == 1 ? "" : "s"))")
        }
        return lines.joined(separator: "\n")
    }

    /// `{"a": {"b": 1}}` → `[("a.b", "1")]`.
    static func flatten(_ object: [String: JSONValue], prefix: String = "") -> [(String, String)] {
        object.flatMap { key, value -> [(String, String)] in
            let path = prefix.isEmpty ? key : prefix + "." + key
            switch value {
            case .object(let inner): return flatten(inner, prefix: path)
            case .string(let s): return [(path, s)]
            case .int(let i): return [(path, String(i))]
            case .double(let d): return [(path, String(d))]
            case .bool(let b): return [(path, String(b))]
            case .null: return [(path, "null")]
            case .array(let a): return [(path, "\(a.count) items")]
            }
        }
    }

    /// The summary, lines joined with `\n`.
    public static func render(_ stats: StatsResult) -> String {
        var lines: [String] = []
        lines.append("uptime     \(Units.duration(Double(stats.uptimeSeconds))), \(stats.sessions) session\(stats.sessions == 1 ? "" : "s") connected")
        lines.append(cache("memory", stats.memory))
        lines.append(cache("disk", stats.disk, rateOf: "of memory misses"))
        lines.append(thumbnails(stats))
        let n = stats.network
        lines.append("network    \(n.inFlight) in flight, \(n.queued) queued, \(n.requests) requests, "
                     + "\(Units.bytes(n.bytesReceived)) received, \(Units.bytes(n.bytesDiscarded)) discarded "
                     + "(\(Units.percent(n.bytesDiscarded, of: n.bytesReceived)) of received, from cancelled transfers)")
        if let shared = stats.shared { lines += self.shared(shared) }
        if let budgets = stats.shared?.budgets, !budgets.isEmpty { lines += self.budgets(budgets) }
        if stats.providers.isEmpty {
            lines.append("providers  none used yet")
        } else {
            lines.append("providers")
            for name in stats.providers.keys.sorted() {
                let p = stats.providers[name]!
                let remaining = p.rateLimitRemaining.map { "\($0) requests left in the rate limit" } ?? "rate limit not reported yet"
                lines.append("  \(DisplayWidth.pad(name, to: 9)) \(p.requests) requests, \(p.errors) errors, \(remaining)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// One tier. Its hits and misses count thumbnail requests, one outcome each (protocol.md,
    /// `stats`), so `hits / (hits + misses)` is a hit rate: of all requests for the memory
    /// tier, of the requests memory missed for the disk tier.
    static func cache(_ name: String, _ c: StatsResult.Cache, rateOf scope: String? = nil) -> String {
        DisplayWidth.pad(name, to: 10) + " "
            + "\(c.entries) entr\(c.entries == 1 ? "y" : "ies"), \(Units.bytes(c.bytes)) of \(Units.bytes(c.limit)) "
            + "(\(Units.percent(c.bytes, of: c.limit)) full), \(c.hits) hit\(c.hits == 1 ? "" : "s"), "
            + "\(c.misses) miss\(c.misses == 1 ? "" : "es") "
            + "(hit rate \(Units.percent(c.hits, of: c.hits &+ c.misses))\(scope.map { " " + $0 } ?? ""))"
    }

    /// Where thumbnail requests were answered: every request is a memory hit or a memory miss,
    /// and every memory miss a disk hit or a disk miss (the network), so the cache's overall
    /// hit rate is `(memory hits + disk hits) / (memory hits + memory misses)`.
    /// With a shared tier, disk misses answered from it are told apart from the network's.
    static func thumbnails(_ stats: StatsResult) -> String {
        let requests = stats.memory.hits &+ stats.memory.misses
        let cached = stats.memory.hits &+ stats.disk.hits
        let fromTier = stats.shared?.thumbnailHits ?? 0
        let tier = stats.shared == nil ? "" : "\(Units.percent(fromTier, of: requests)) from the shared tier, "
        return DisplayWidth.pad("thumbnails", to: 10) + " "
            + "\(requests) request\(requests == 1 ? "" : "s"): \(Units.percent(stats.memory.hits, of: requests)) from memory, "
            + "\(Units.percent(stats.disk.hits, of: requests)) from disk, \(tier)"
            + "\(Units.percent(max(0, stats.disk.misses &- fromTier), of: requests)) "
            + "from the network (cache hit rate \(Units.percent(cached, of: requests)))"
    }

    /// The fleet's provider budgets: used of the limit per window, and a stop after a quota
    /// answer (as a time of day in UTC, which every host of the fleet reads alike).
    static func budgets(_ budgets: [String: StatsResult.Shared.Budget]) -> [String] {
        var lines = ["fleet budgets"]
        for name in budgets.keys.sorted() {
            guard let b = budgets[name] else { continue }
            var line = "  \(DisplayWidth.pad(name, to: 9)) \(b.used) of \(b.limit) per \(Units.duration(Double(b.windowSeconds)))"
            if let until = b.stoppedUntil {
                line += ", stopped by a quota answer until \(Date(timeIntervalSince1970: until).formatted(.iso8601))"
            }
            lines.append(line)
        }
        return lines
    }

    /// The fleet's shared tier: what it did for this host, then each memcached node.
    static func shared(_ shared: StatsResult.Shared) -> [String] {
        var lines = [DisplayWidth.pad("shared", to: 10) + " "
            + "\(shared.thumbnailHits) thumbnail\(shared.thumbnailHits == 1 ? "" : "s") from the tier, \(shared.writes) written "
            + "(\(shared.writesFailed) not), \(shared.waits) waited for another host (\(shared.waitsExpired) in vain), "
            + "\(shared.rejected) refused by verification"]
        for node in shared.nodes {
            lines.append("  \(node.server) \(node.state): \(node.hits) hits, \(node.misses) misses, \(node.errors) errors, "
                         + "\(node.ejections) ejection\(node.ejections == 1 ? "" : "s"), \(Units.bytes(node.bytesSent)) sent, "
                         + "\(Units.bytes(node.bytesReceived)) received")
        }
        return lines
    }
}

/// `imagecache status`: who answers on the socket.
public enum StatusSummary {
    /// The summary, lines joined with `\n`.
    public static func render(_ hello: HelloResult, socketPath: String) -> String {
        var lines = ["\(hello.name) \(hello.version) at \(socketPath), protocol \(hello.protocolVersion)"]
        if hello.protocolVersion != ProtocolVersion.current {
            lines.append("warning: this imagecache speaks protocol \(ProtocolVersion.current); some commands may fail")
        }
        lines.append("providers:")
        for p in hello.providers {
            lines.append("  \(DisplayWidth.pad(p.name, to: 9)) \(p.configured ? "configured" : "no API key (searches naming it answer provider_unavailable)")")
        }
        if hello.providers.isEmpty { lines.append("  none") }
        return lines.joined(separator: "\n")
    }
}
