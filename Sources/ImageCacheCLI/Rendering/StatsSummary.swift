import ImageCacheProtocol

/// `imagecache stats` for a person: every figure of the `stats` answer, grouped, with units
/// and the ratios worth knowing (hit rate, fill level, bytes wasted on cancelled transfers).
public enum StatsSummary {
    /// The summary, lines joined with `\n`.
    public static func render(_ stats: StatsResult) -> String {
        var lines: [String] = []
        lines.append("uptime     \(Units.duration(stats.uptimeSeconds)), \(stats.sessions) session\(stats.sessions == 1 ? "" : "s") connected")
        lines.append(cache("memory", stats.memory))
        lines.append(cache("disk", stats.disk))
        let n = stats.network
        lines.append("network    \(n.inFlight) in flight, \(n.queued) queued, \(n.requests) requests, "
                     + "\(Units.bytes(n.bytesReceived)) received, \(Units.bytes(n.bytesDiscarded)) discarded "
                     + "(\(Units.percent(n.bytesDiscarded, of: n.bytesReceived)) of received, from cancelled transfers)")
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

    static func cache(_ name: String, _ c: StatsResult.Cache) -> String {
        DisplayWidth.pad(name, to: 10) + " "
            + "\(c.entries) entr\(c.entries == 1 ? "y" : "ies"), \(Units.bytes(c.bytes)) of \(Units.bytes(c.limit)) "
            + "(\(Units.percent(c.bytes, of: c.limit)) full), \(c.hits) hits, \(c.misses) misses "
            + "(hit rate \(Units.percent(c.hits, of: c.hits + c.misses)))"
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
