import Foundation
import NIOCore

/// How many event loop threads the daemon runs: one per CPU it may actually run on.
///
/// NIO's default counts the machine's CPUs (and cgroup quotas) but not the process's CPU
/// affinity. A daemon confined to one CPU (`taskset`, systemd's `CPUAffinity=`) would then run
/// two event loops time-sliced on one core, and a connection whose loop is waiting for the
/// other's slice sees a scheduler quantum (milliseconds) of latency. Counting the affinity
/// mask avoids that and costs nothing when all CPUs are allowed.
enum EventLoopSizing {
    /// The CPUs in this process's affinity mask (`Cpus_allowed` in /proc/self/status), capped
    /// by NIO's count; NIO's count alone when the mask cannot be read.
    static var threadCount: Int {
        let machine = System.coreCount
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else {
            return machine
        }
        let mask = line.dropFirst("Cpus_allowed:".count).filter { $0.isHexDigit }
        let allowed = mask.reduce(0) { count, digit in count + (Int(String(digit), radix: 16) ?? 0).nonzeroBitCount }
        return max(1, min(machine, allowed == 0 ? machine : allowed))
    }
}
