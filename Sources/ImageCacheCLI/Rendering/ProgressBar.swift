import ImageCacheProtocol

/// One transfer's progress as the CLI shows it.
public struct ProgressItem: Sendable, Equatable {
    /// What is moving (a photo id, a file name).
    public var label: String
    /// Bytes so far.
    public var received: Int
    /// The whole size when known.
    public var total: Int?
    /// Bytes per second; nil means "compute from received and elapsed".
    public var bytesPerSecond: Double?
    /// Seconds since the item started.
    public var elapsed: Double
    /// Set once the item ended: `"done"`, `"failed: …"`, `"cancelled"`.
    public var outcome: String?
    /// True when `received`/`total` count items (prefetch) rather than bytes.
    public var countsItems: Bool

    public init(label: String, received: Int = 0, total: Int? = nil, bytesPerSecond: Double? = nil,
                elapsed: Double = 0, outcome: String? = nil, countsItems: Bool = false) {
        self.countsItems = countsItems
        self.label = label
        self.received = received
        self.total = total
        self.bytesPerSecond = bytesPerSecond
        self.elapsed = elapsed
        self.outcome = outcome
    }

    /// The rate shown: the daemon's moving average when it sent one, else the mean so far.
    public var rate: Double {
        if let bytesPerSecond, bytesPerSecond > 0 { return bytesPerSecond }
        return elapsed > 0 ? Double(received) / elapsed : 0
    }

    /// Seconds left at the current rate; nil when the size or the rate is unknown.
    public var eta: Double? {
        guard let total, rate > 0, total >= received else { return nil }
        return (Double(total) - Double(received)) / rate  // no Int overflow on a daemon's odd figures
    }

    /// Fraction done, nil when the size is unknown.
    public var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, max(0, Double(received) / Double(total)))
    }
}

/// Draws progress: bars redrawn in place on a terminal, plain lines elsewhere.
///
/// A bar per item, each line `label [#####-----] 45% 1.2 MiB / 2.7 MiB 850 KiB/s ETA 2s`.
/// Every part has a fixed width for a given terminal width (the label padded or cut, the
/// figures padded to `figuresWidth`), so a bar never jumps as its figures grow and all bars
/// of a board line up; it ends as `done`, `cancelled`, `recycled` or `failed: kind`.
/// Pure functions of the items and the width, so tests check the lines; `ProgressBoard`
/// decides when to draw.
public enum ProgressBar {
    /// Columns the figures take: `100% 1023 MiB / 1023 MiB 1023 KiB/s ETA 23h59m` fits.
    public static let figuresWidth = 46
    /// The widest bar drawn; a wider terminal gets a shorter line, not a longer bar.
    public static let maximumBarWidth = 40
    /// Seconds before a rate or an ETA is shown: over the first moments a mean is noise
    /// (a cached head makes 50 MiB/s, a slow connect 0 B/s).
    public static let rateDelay = 0.5

    /// One bar line no wider than `width` columns, of the same width whatever the figures.
    public static func line(_ item: ProgressItem, width: Int) -> String {
        let labelWidth = min(28, max(8, width / 4))
        let label = DisplayWidth.pad(item.label, to: labelWidth)
        let tailWidth = min(figuresWidth, max(0, width - labelWidth - 4 - 10))
        let barWidth = min(maximumBarWidth, width - labelWidth - tailWidth - 4)
        guard barWidth >= 5, tailWidth > 0 else { return DisplayWidth.truncate(label + " " + figures(item), to: max(1, width)) }
        let bar: String
        if let fraction = item.outcome == "done" ? 1 : item.fraction {
            let filled = Int((fraction * Double(barWidth)).rounded(.down))
            bar = String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
        } else {
            bar = String(repeating: "?", count: barWidth)
        }
        return "\(label) [\(bar)] \(DisplayWidth.pad(figures(item), to: tailWidth))"
    }

    /// `45% 1.2 MiB / 2.7 MiB 850 KiB/s ETA 2s`, or the outcome once ended. The rate and
    /// the ETA appear only after `rateDelay`.
    public static func figures(_ item: ProgressItem) -> String {
        let unit: (Int) -> String = item.countsItems ? { (n: Int) -> String in "\(n)" } : { Units.bytes($0) }
        let amount = item.total.map { "\(unit(item.received)) / \(unit($0))" } ?? unit(item.received)
        let percent = item.fraction.map { "\(Int(($0 * 100).rounded(.down)))%" } ?? "  ?%"
        if let outcome = item.outcome {
            // The outcome first: on a narrow terminal the figures' end is what gets cut.
            return "\(outcome) \(percent) \(amount) in \(Units.duration(item.elapsed))"
        }
        guard item.elapsed >= rateDelay else { return "\(percent) \(amount)" }
        let rate = item.countsItems ? String(format: "%.1f/s", item.rate) : Units.rate(item.rate)
        let eta = item.eta.map { "ETA \(Units.duration($0))" } ?? "ETA --"
        return "\(percent) \(amount) \(rate) \(eta)"
    }

    /// A plain line for a log or a pipe: `label: 45% 1.2 MiB / 2.7 MiB 850 KiB/s ETA 2s`.
    public static func plainLine(_ item: ProgressItem) -> String {
        "\(item.label): \(figures(item))"
    }

}

/// The set of bars a command shows, and when to draw them.
///
/// On a terminal every bar is redrawn in place (ANSI cursor up + erase line), at most every
/// `interval` seconds, plus once when an item ends. Elsewhere (a pipe, a log) nothing is
/// redrawn: one plain line is written when an item starts, at each quarter of its size, and
/// when it ends, so a log stays short and readable.
public struct ProgressBoard: Sendable {
    /// The bars, in the order they were added.
    public private(set) var items: [ProgressItem] = []
    private var lastQuarter: [Int] = []
    private var lastDraw: Double = -.infinity
    private var linesOnScreen = 0
    /// Whether to draw bars in place.
    public let terminal: Terminal
    /// The shortest time between two redraws on a terminal.
    public let interval: Double

    public init(terminal: Terminal, interval: Double = 0.1) {
        self.terminal = terminal
        self.interval = interval
    }

    /// Adds a bar; returns its index and the text to write now.
    public mutating func add(_ item: ProgressItem, now: Double) -> (index: Int, output: String) {
        items.append(item)
        lastQuarter.append(0)
        if terminal.isTTY { return (items.count - 1, redraw(now: now)) }
        return (items.count - 1, ProgressBar.plainLine(item) + "\n")
    }

    /// Updates a bar; returns the text to write now (often empty: throttled).
    public mutating func update(_ index: Int, now: Double, _ change: (inout ProgressItem) -> Void) -> String {
        guard items.indices.contains(index) else { return "" }
        let wasEnded = items[index].outcome != nil
        change(&items[index])
        let ended = !wasEnded && items[index].outcome != nil
        if terminal.isTTY {
            return ended || now - lastDraw >= interval ? redraw(now: now) : ""
        }
        if ended { return ProgressBar.plainLine(items[index]) + "\n" }
        guard items[index].outcome == nil, let fraction = items[index].fraction else { return "" }
        let quarter = Int(fraction * 4)
        if quarter > lastQuarter[index], quarter < 4 {
            lastQuarter[index] = quarter
            return ProgressBar.plainLine(items[index]) + "\n"
        }
        return ""
    }

    /// All bars drawn afresh over the previous drawing.
    public mutating func redraw(now: Double) -> String {
        lastDraw = now
        var text = linesOnScreen > 0 ? "\u{1B}[\(linesOnScreen)A" : ""
        for item in items {
            text += "\r\u{1B}[2K" + ProgressBar.line(item, width: terminal.width - 1) + "\n"
        }
        linesOnScreen = items.count
        return text
    }
}
