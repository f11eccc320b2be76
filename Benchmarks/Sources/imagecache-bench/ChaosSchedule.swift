import Foundation
import ImageCacheKit
#if canImport(Glibc)
import Glibc
#endif

/// The chaos soak's fault schedule: after a calm warm-up, one fault window after another in a
/// fixed cycle, each followed by a calm gap, until the calm tail. Each window opens and closes
/// its fault itself; the current phase's name goes into every CSV row.
final class ChaosSchedule: @unchecked Sendable {
    enum Fault: String, CaseIterable {
        case providerSlow = "provider-slow"
        case provider5xx = "provider-503"
        case provider429 = "provider-429"
        case providerTruncated = "provider-truncated"
        case providerReset = "provider-reset"
        case imageStall = "image-stall"
        case imageReset = "image-reset"
        case memcachedKill = "memcached-kill"
        case diskFull = "disk-full"
        case reload = "sighup-reload"
        case kill9 = "kill-9"
        case fdLimit = "fd-limit"
    }

    let providers: ChaosHost
    let images: ChaosHost
    let nodes: [MemcachedNode]
    let daemon: ChaosDaemon
    let ledger: ChaosLedger
    /// Where to write the file that fills the cache's filesystem; nil: that fault is skipped.
    let fillPath: String?
    let phase = LockedState("warm-up")
    private let eventsState = LockedState<[String]>([])
    private let start: ContinuousClock.Instant
    /// Kills of the daemon the schedule made (any other exit is a crash).
    private(set) var plannedKills = 0
    private(set) var crashes: [String] = []

    init(providers: ChaosHost, images: ChaosHost, nodes: [MemcachedNode], daemon: ChaosDaemon, ledger: ChaosLedger,
         fillPath: String?, start: ContinuousClock.Instant) {
        self.providers = providers
        self.images = images
        self.nodes = nodes
        self.daemon = daemon
        self.ledger = ledger
        self.fillPath = fillPath
        self.start = start
    }

    var events: [String] { eventsState.withLock { $0 } }
    var seconds: Double { (ContinuousClock.now - start) / .seconds(1) }

    func event(_ text: String) {
        let line = String(format: "%7.1f s  %@", seconds, text)
        say(line)
        eventsState.withLock { $0.append(line) }
    }

    /// Runs the schedule over `total` seconds: warm-up (the first fifth, at least 20 s), windows
    /// of `window` seconds with gaps of half that, and a calm tail (the last tenth).
    func run(total: Double, window: Double) async {
        let warmUp = max(20, total / 5), tail = max(10, total / 10)
        await sleep(until: warmUp)
        var cycle = 0
        while seconds + window * 1.5 < total - tail {
            let fault = Fault.allCases[cycle % Fault.allCases.count]
            cycle += 1
            phase.withLock { $0 = fault.rawValue }
            ledger.setFaultOpen(true)
            await apply(fault, for: window)
            ledger.setFaultOpen(false)
            phase.withLock { $0 = "calm" }
            await sleep(until: seconds + window / 2)
        }
        phase.withLock { $0 = "tail" }
        await sleep(until: total)
    }

    private func sleep(until target: Double) async {
        while seconds < target {
            await checkAlive()
            try? await Task.sleep(for: .milliseconds(Int(min(0.5, max(0.01, target - seconds)) * 1000)))
        }
    }

    /// A daemon that exited without being told to is a crash: recorded, then started again so
    /// the soak goes on.
    func checkAlive() async {
        guard let exit = daemon.exited else { return }
        crashes.append(String(format: "%.1f s: imagecached exited (%@ %d) unplanned", seconds,
                              exit.reason == .uncaughtSignal ? "signal" : "status", exit.status))
        event("CRASH: \(crashes.last!); restarting")
        ledger.setDaemonAway(true)
        do { try await daemon.start() } catch { event("restart failed: \(error)") }
        ledger.setDaemonAway(false)
    }

    private func apply(_ fault: Fault, for window: Double) async {
        let end = seconds + window
        switch fault {
        case .providerSlow: await host(providers, .slow(milliseconds: 2500), until: end, fault)
        case .provider5xx: await host(providers, .status(503, retryAfter: "1"), until: end, fault)
        case .provider429: await host(providers, .status(429, retryAfter: "2"), until: end, fault)
        case .providerTruncated: await host(providers, .truncate, until: end, fault)
        case .providerReset: await host(providers, .reset, until: end, fault)
        case .imageStall: await host(images, .stall, until: end, fault)
        case .imageReset: await host(images, .reset, until: end, fault)
        case .memcachedKill:
            let node = nodes[(plannedKills + Int(seconds)) % nodes.count]
            event("memcached \(node.address) killed")
            node.kill()
            await sleep(until: end)
            do { try await node.start() } catch { event("memcached restart failed: \(error)") }
            event("memcached \(node.address) started again")
        case .diskFull: await fillDisk(until: end)
        case .reload:
            do {
                try daemon.reloadSwappingMemoryLimit()
                event("SIGHUP with memory_limit = \(daemon.memoryLimitMiB)MiB")
            } catch { event("reload failed: \(error)") }
            await sleep(until: end)
        case .kill9:
            ledger.setDaemonAway(true)
            plannedKills += 1
            event("kill -9 of imagecached (pid \(daemon.pid ?? 0))")
            daemon.kill9()
            try? await Task.sleep(for: .milliseconds(500))
            do { try await daemon.start() } catch { event("restart after kill -9 failed: \(error)") }
            event("imagecached started again (pid \(daemon.pid ?? 0)) under the same cache and job table")
            try? await Task.sleep(for: .seconds(1))
            ledger.setDaemonAway(false)
            await sleep(until: end)
        case .fdLimit: await lowerFileLimit(until: end)
        }
    }

    private func host(_ host: ChaosHost, _ fault: HostFault, until end: Double, _ name: Fault) async {
        event("\(name.rawValue): \(fault) on every other request")
        host.set(fault)
        await sleep(until: end)
        host.set(.none)
    }

    /// Fills the cache's filesystem to ENOSPC with one file, holds it, then removes it.
    private func fillDisk(until end: Double) async {
        guard let fillPath else {
            event("disk-full skipped: the cache is not on a filesystem of its own (needs root for the tmpfs)")
            await sleep(until: end)
            return
        }
        let fd = Glibc.open(fillPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        var written = 0
        if fd >= 0 {
            let chunk = [UInt8](repeating: 0xA5, count: 1 << 20)
            while true {
                let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                written += n
            }
            close(fd)
        }
        event(String(format: "disk-full: %.1f MiB written to %@, the filesystem is full (ENOSPC)", Double(written) / 1_048_576, fillPath))
        await sleep(until: end)
        unlink(fillPath)
        event("disk-full: file removed")
    }

    /// Lowers the daemon's soft open-file limit to a little above what it holds now
    /// (`prlimit --pid`), then puts the old one back.
    private func lowerFileLimit(until end: Double) async {
        guard let pid = daemon.pid, let limits = Self.fileLimit(pid: pid) else { return }
        let (soft, hard) = limits
        let low = ChaosSample.openFiles(pid: pid) + 8
        let set = { (value: String) in Self.run("/usr/bin/prlimit", ["--pid", String(pid), "--nofile=\(value):\(hard)"]) }
        guard set(String(low)) else {
            event("fd-limit skipped: prlimit failed")
            await sleep(until: end)
            return
        }
        event("fd-limit: soft RLIMIT_NOFILE \(soft) → \(low) (pid \(pid))")
        await sleep(until: end)
        if daemon.pid == pid { _ = set(soft) }
        event("fd-limit: back to \(soft)")
    }

    static func fileLimit(pid: Int32) -> (String, String)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") }) else { return nil }
        let parts = line.dropFirst("Max open files".count).split(separator: " ")
        guard parts.count >= 2 else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
