import Foundation

/// Human-readable sizes, rates and durations for tables and progress bars.
///
/// Binary units (KiB, MiB) as cache.conf writes its limits, so a figure in `stats` can be
/// compared with the configuration by eye.
public enum Units {
    /// `1536` → `"1.5 KiB"`; bytes below 1 KiB stay exact.
    public static func bytes(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(count) / 1024
        var index = 0
        while value >= 1024, index < units.count - 1 {
            value /= 1024
            index += 1
        }
        return String(format: value < 10 ? "%.1f %@" : "%.0f %@", value, units[index])
    }

    /// A transfer rate per second.
    public static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond > 0 else { return "-- B/s" }
        // Computed from a daemon's byte counts: a figure past Int (1e300) is shown, never a trap.
        return bytes(Int(min(bytesPerSecond, 1e18))) + "/s"
    }

    /// `0.26` → `"260 ms"`, `75` → `"1m15s"`, `3700` → `"1h01m"`; seconds below a minute as
    /// `"42s"`. Under a second the milliseconds are shown: a fast download ends "in 260 ms",
    /// not "in 0s", which reads as nothing having happened.
    public static func duration(_ seconds: Double) -> String {
        // A daemon's figure, never trusted to fit an Int: bounded before any conversion.
        guard seconds.isFinite, seconds >= 0 else { return "--" }
        let bounded = min(seconds, 1e12)
        // Both conversions are exact: whole numbers of at most 1e12 (the bound above).
        if bounded < 0.9995 { return "\(Int(exactly: (bounded * 1000).rounded()) ?? 0) ms" }
        let s = Int(exactly: bounded.rounded()) ?? 0
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m\(String(format: "%02d", s % 60))s" }
        if s < 86400 { return "\(s / 3600)h\(String(format: "%02d", (s % 3600) / 60))m" }
        return "\(s / 86400)d\(String(format: "%02d", (s % 86400) / 3600))h"
    }

    /// `seconds` rounded to whole milliseconds, as the JSON output carries durations: a
    /// client's clock measures nothing finer, and `0.26088882999999896` only shows float noise.
    public static func milliseconds(_ seconds: Double) -> Double {
        guard seconds.isFinite else { return 0 }
        return (seconds * 1000).rounded() / 1000
    }

    /// A short duration with its fraction, for `-v`: `0.042s`, `1.5s`.
    public static func seconds(_ value: Double) -> String {
        guard value.isFinite, value >= 0 else { return "--" }
        return value < 10 ? String(format: "%.3fs", value) : duration(value)
    }

    /// `1 photo`, `2 photos`; `irregular` for words whose plural is not `+s`
    /// (`count(3, "entry", "entries")`). One place, so no line says "1 photos".
    public static func count(_ n: Int, _ singular: String, _ irregular: String? = nil) -> String {
        "\(n) " + (n == 1 ? singular : irregular ?? singular + "s")
    }

    /// A percentage of a ratio, `"—"` when the denominator is 0.
    public static func percent(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "—" }
        return String(format: "%.1f%%", Double(part) * 100 / Double(whole))
    }
}
