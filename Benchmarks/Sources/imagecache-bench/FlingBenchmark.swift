import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheKit
import ProviderSimulator

/// What a fling costs in bytes: a grid scrolled fast past `slots` photos (one slot shown every
/// `interval`, each recycled `visible` later), then `kept` slots shown and kept, against a slow
/// image server. The figure is the bytes the server sent (its own count: complete responses
/// plus what aborted ones had written) over the bytes of the kept images.
///
/// Each round runs three clients, each against a fresh `imagecached` process and fresh paths:
/// the fling with the configured `fling_dwell` (the contract's hold), the same fling with
/// `fling_dwell = 0` (every slot starts at once, recycles abort), and a client that loads every
/// slot (never recycles). Before the two flings, a calm first screen (`kept` slots shown at once
/// on a fresh session, from a fast route) measures the latency a hold would add: the contract
/// says a calm session is never held, so the two must match.
struct FlingBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fling",
        abstract: "Bytes fetched by a fling against a slow server, with and without fling_dwell, vs loading every slot."
    )

    @Option(help: "The imagecached binary to run (a release build).")
    var daemon: String
    @Option(help: "Rounds (each runs every client once).")
    var rounds = 3
    @Option(help: "Slots flung past.")
    var slots = 300
    @Option(help: "Slots shown after the fling and kept until loaded.")
    var kept = 10
    @Option(help: "Milliseconds between two shows.")
    var intervalMs = 10
    @Option(help: "Milliseconds a flung slot stays visible before it is recycled.")
    var visibleMs = 80
    @Option(help: "Approximate size of each image.")
    var imageBytes = 30 * 1024
    @Option(help: "The slow server's pace per response, bytes per second.")
    var bytesPerSecond = 20_000
    @Option(help: "fling_dwell of the held run (the contract's default).")
    var dwell = "120ms"
    @Option(help: "Slot numbers the grid reuses (a recycled slot's number comes back).")
    var gridSlots = 16
    @Flag(help: "Leave out the client that loads every slot (it takes longest; it runs in round 1 only).")
    var skipEverySlot = false
    @Option(help: "Calm first screens per daemon (each a fresh session showing `kept` new slots at once).")
    var calmScreens = 5
    @Option(help: "Folder for the daemons' sockets and caches.")
    var folder = "/tmp"

    /// One of the three clients.
    enum Client: CustomStringConvertible {
        case fling(dwell: String)
        case everySlot

        var isEverySlot: Bool {
            if case .everySlot = self { return true }
            return false
        }

        var description: String {
            switch self {
            case .fling(let dwell): "fling, fling_dwell = \(dwell)"
            case .everySlot: "loads every slot"
            }
        }
    }

    /// The outcome of one show.
    enum Outcome: Sendable {
        case delivered(seconds: Double, source: ThumbnailSource)
        case cancelled
        case failed(String)
    }

    struct Figures {
        var served = 0
        var keptBytes = 0
        var requests = 0
        var aborted = 0
        var delivered = 0
        var cancelled = 0
        var failed: [String] = []
        var keptLatencies: [Double] = []
        var calmLatencies: [Double] = []
        var seconds = 0.0

        var ratio: Double { Double(served) / Double(keptBytes) }
    }

    func run() async throws {
        let server = try await ImageServer.start()
        let total = slots + kept
        var images: [[UInt8]] = []
        var widths: [Int] = []
        for index in 0..<total {
            let image = SyntheticImages.jpeg(approximateBytes: imageBytes, seed: UInt64(index + 1))
            guard case .header(let header) = try ImageHeaderProbe.probe(image) else {
                throw ValidationError("synthetic image \(index) has no complete header")
            }
            images.append(image)
            widths.append(header.width)
        }
        print("== fling: \(slots) slots, one every \(intervalMs) ms, each visible \(visibleMs) ms, then \(kept) kept;"
              + " images \(images.map(\.count).min()!)–\(images.map(\.count).max()!) bytes,"
              + " served at \(bytesPerSecond) B/s per response; load average \(loadAverage())")
        var summary: [String: [Figures]] = [:]
        var clients: [Client] = []
        for round in 1...rounds {
            // The two flings swap places every round, so neither always runs first.
            clients = round % 2 == 1 ? [.fling(dwell: dwell), .fling(dwell: "0ms")] : [.fling(dwell: "0ms"), .fling(dwell: dwell)]
            if !skipEverySlot { clients.append(.everySlot) }
            // The every-slot client's bytes do not depend on timing (every image completes):
            // one round of it is enough, and it is the slowest by far.
            for (number, client) in clients.enumerated() where round == 1 || !client.isEverySlot {
                let prefix = "/r\(round)c\(number)"
                for index in 0..<total {
                    server.serve("\(prefix)/slow/\(index).jpg", body: images[index], faults: [.slowBody(bytesPerSecond: bytesPerSecond)])
                }
                for index in 0..<(kept * calmScreens) {
                    server.serve("\(prefix)/calm/\(index).jpg", body: images[index % total])
                }
                let figures = try await measure(client, server: server, prefix: prefix, images: images, widths: widths)
                summary[client.description, default: []].append(figures)
                print(report(round: round, client: client, figures))
            }
        }
        print("== summary over \(rounds) rounds (bytes served / bytes of the \(kept) kept images)")
        for client in clients.sorted(by: { $0.description < $1.description }) {
            let figures = summary[client.description] ?? []
            print("\(client): " + figures.map { String(format: "%.2f ×", $0.ratio) }.joined(separator: ", "))
            let calm = figures.flatMap(\.calmLatencies).sorted()
            if !calm.isEmpty {
                print(String(format: "  calm first screens, all rounds (%d shows): median %.1f ms, p90 %.1f ms, max %.1f ms",
                             calm.count, 1000 * calm[calm.count / 2], 1000 * calm[calm.count * 9 / 10], 1000 * calm.last!))
            }
        }
        await server.shutdown()
    }

    private func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
    }

    private func report(round: Int, client: Client, _ f: Figures) -> String {
        func ms(_ values: [Double]) -> String {
            guard !values.isEmpty else { return "—" }
            let sorted = values.sorted()
            return String(format: "median %.1f ms, max %.1f ms", 1000 * sorted[sorted.count / 2], 1000 * sorted.last!)
        }
        var lines = [
            "round \(round), \(client): served \(f.served) B for \(f.keptBytes) B kept = \(String(format: "%.2f ×", f.ratio));"
                + " \(f.requests) requests reached the server, \(f.aborted) aborted; \(f.delivered) delivered,"
                + " \(f.cancelled) cancelled, \(f.failed.count) failed; \(String(format: "%.1f", f.seconds)) s;"
                + " load average \(loadAverage())",
            "  kept slots, show → answer: \(ms(f.keptLatencies))",
        ]
        if !f.calmLatencies.isEmpty {
            lines.append("  calm first screens (\(calmScreens) × \(kept) at once, fast route): \(ms(f.calmLatencies))")
        }
        if let first = f.failed.first { lines.append("  first failure: \(first)") }
        return lines.joined(separator: "\n")
    }

    private func measure(_ client: Client, server: ImageServer, prefix: String, images: [[UInt8]], widths: [Int]) async throws -> Figures {
        var network = ["max_connections_per_host = 6"]
        if case .fling(let dwell) = client { network.append("fling_dwell = \(dwell)") }
        let folder = self.folder + "/fling-bench-\(getpid())\(prefix.replacingOccurrences(of: "/", with: "-"))"
        return try await BenchDaemon.run(binary: daemon, folder: folder, daemon: ["max_pending_per_session = 4096"],
                                         network: network) { process in
            var figures = Figures()
            let total = slots + kept
            let base = server.baseURL + prefix

            if case .fling = client {
                // Calm first screens, each on its own session: `kept` new slots at once, nothing recycled.
                for screen in 0..<calmScreens {
                    let calm = try await ImageCacheConnection.connect(to: process.socket)
                    let outcomes = try await withDeadline(60, "a calm first screen") { [kept, total] in
                        try await withThrowingTaskGroup(of: Outcome.self) { group in
                            for slot in 0..<kept {
                                let index = screen * kept + slot
                                group.addTask {
                                    await Self.show(calm, slot: slot, url: "\(base)/calm/\(index).jpg", size: widths[index % total])
                                }
                            }
                            return try await group.reduce(into: []) { $0.append($1) }
                        }
                    }
                    await calm.close()
                    for case .delivered(let seconds, _) in outcomes { figures.calmLatencies.append(seconds) }
                    figures.failed += outcomes.compactMap { if case .failed(let why) = $0 { why } else { nil } }
                }
            }

            let connection = try await ImageCacheConnection.connect(to: process.socket)
            let start = ContinuousClock.now
            let recycles: Bool
            if case .everySlot = client { recycles = false } else { recycles = true }
            // The timeline: show i at i × interval; a flung slot is recycled `visible` later.
            var events: [(at: Int, index: Int, show: Bool)] = []
            for index in 0..<total {
                events.append((index * intervalMs, index, true))
                if recycles, index < slots { events.append((index * intervalMs + visibleMs, index, false)) }
            }
            events.sort { ($0.at, $0.show ? 1 : 0) < ($1.at, $1.show ? 1 : 0) }  // a recycle before a show at the same instant
            let slotCount = recycles ? gridSlots : total
            var shows: [Task<Outcome, Never>] = []
            var keptShows: [Task<Outcome, Never>] = []
            for event in events {
                try await Task.sleep(until: start + .milliseconds(event.at), clock: .continuous)
                let slot = event.index % slotCount
                if event.show {
                    let url = "\(base)/slow/\(event.index).jpg"
                    let size = widths[event.index]
                    let task = Task { await Self.show(connection, slot: slot, url: url, size: size) }
                    if event.index >= slots { keptShows.append(task) } else { shows.append(task) }
                } else {
                    Task { _ = try? await connection.recycleThumbnail(slot: slot) }
                }
            }
            let settled = try await withDeadline(600, "the fling's shows") { [shows, keptShows] in
                var all: [Outcome] = []
                for task in shows + keptShows { all.append(await task.value) }
                return all
            }
            let keptOutcomes = Array(settled.suffix(kept))
            figures.seconds = (ContinuousClock.now - start) / .seconds(1)
            for outcome in settled {
                switch outcome {
                case .delivered: figures.delivered += 1
                case .cancelled: figures.cancelled += 1
                case .failed(let why): figures.failed.append(why)
                }
            }
            for case .delivered(let seconds, _) in keptOutcomes { figures.keptLatencies.append(seconds) }
            // Every transfer has ended (completed or aborted) before the server's counts are read.
            try await withDeadline(60, "the server's last responses") {
                try await server.waitUntil { $0.inFlight == 0 }
            }
            await connection.close()
            let counters = server.counters
            for index in 0..<total {
                let path = "\(prefix)/slow/\(index).jpg"
                figures.served += counters.completed(path) * images[index].count + counters.abortedBytes[path, default: 0]
                figures.requests += counters.requests(path)
                figures.aborted += counters.aborted(path)
            }
            figures.keptBytes = images[slots...].map(\.count).reduce(0, +)
            return figures
        }
    }

    private static func show(_ connection: ImageCacheConnection, slot: Int, url: String, size: Int) async -> Outcome {
        let start = ContinuousClock.now
        do {
            let result = try await connection.showThumbnail(ThumbnailShowParams(slot: slot, image: .url(url), size: size))
            return .delivered(seconds: (ContinuousClock.now - start) / .seconds(1), source: result.source)
        } catch let error as RPCError where error.kind == .cancelled {
            return .cancelled
        } catch {
            return .failed("\(url): \(error)")
        }
    }
}
