import Testing
@testable import ImageCacheCLI

@Suite("Progress bars and plain progress lines", .timeLimit(.minutes(1)))
struct ProgressTests {
    let pipe = Terminal(isTTY: false, width: 100)
    let tty = Terminal(isTTY: true, width: 80)

    @Test func barShowsPercentBytesRateAndETA() {
        let item = ProgressItem(label: "unsplash:a", received: 512 * 1024, total: 1024 * 1024, bytesPerSecond: 256 * 1024, elapsed: 2)
        let line = ProgressBar.line(item, width: 100)
        #expect(line.contains("50%"))
        #expect(line.contains("512 KiB / 1.0 MiB"))
        #expect(line.contains("256 KiB/s"))
        #expect(line.contains("ETA 2s"))
        #expect(DisplayWidth.of(line) <= 100)
    }

    @Test(arguments: [30, 50, 80, 200])
    func barFitsTheWidth(width: Int) {
        let item = ProgressItem(label: "a-very-long-label-for-a-photo-id:1234567890", received: 10, total: 1000, elapsed: 1)
        #expect(DisplayWidth.of(ProgressBar.line(item, width: width)) <= width)
    }

    @Test func unknownTotalHasNoETA() {
        let item = ProgressItem(label: "x", received: 2048, total: nil, elapsed: 1)
        #expect(ProgressBar.figures(item).contains("ETA --"))
        #expect(item.rate == 2048)
    }

    @Test func onAPipeProgressIsPlainLinesAtStartQuartersAndEnd() {
        var board = ProgressBoard(terminal: pipe)
        var output = ""
        let added = board.add(ProgressItem(label: "f.jpg", total: 1000), now: 0)
        output += added.output
        for step in 1...100 {
            output += board.update(added.index, now: Double(step) * 0.01) { $0.received = step * 10; $0.elapsed = Double(step) * 0.01 }
        }
        output += board.update(added.index, now: 1.1) { $0.outcome = "done" }
        let lines = output.split(separator: "\n")
        #expect(!output.contains("\u{1B}"))
        #expect(lines.count == 5, "\(lines)")
        #expect(lines[1].contains("25%") && lines[2].contains("50%") && lines[3].contains("75%"))
        #expect(lines[4].contains("100%") && lines[4].contains("done"))
    }

    @Test func onATerminalRedrawsAreThrottled() {
        var board = ProgressBoard(terminal: tty, interval: 0.25)
        let added = board.add(ProgressItem(label: "f.jpg", total: 1000), now: 0)
        var draws = 0
        for step in 1...48 {
            // 1/16 s apart (exact in binary), so every fourth update is due.
            if !board.update(added.index, now: Double(step) / 16, { $0.received = step * 10 }).isEmpty { draws += 1 }
        }
        #expect(draws == 12)
    }

    @Test func onATerminalTheEndIsAlwaysDrawn() {
        var board = ProgressBoard(terminal: tty, interval: 10)
        let added = board.add(ProgressItem(label: "f.jpg", total: 1000), now: 0)
        let text = board.update(added.index, now: 0.001) { $0.received = 1000; $0.outcome = "done" }
        #expect(text.contains("done"))
    }

    @Test func terminalRedrawMovesUpOverEveryBar() {
        var board = ProgressBoard(terminal: tty)
        _ = board.add(ProgressItem(label: "a"), now: 0)
        _ = board.add(ProgressItem(label: "b"), now: 1)
        let text = board.redraw(now: 2)
        #expect(text.hasPrefix("\u{1B}[2A"))
        #expect(text.components(separatedBy: "\u{1B}[2K").count == 3)
    }

    @Test func itemProgressCountsItemsNotBytes() {
        let item = ProgressItem(label: "prefetch", received: 3, total: 12, elapsed: 1, countsItems: true)
        #expect(ProgressBar.figures(item).contains("3 / 12"))
        #expect(ProgressBar.figures(item).contains("3.0/s"))
    }
}
