import DequeModule

/// The filter weights of the axes resized lately, by source length, target length and filter.
///
/// Computing a Lanczos window per output sample was 1.0–1.3 % of a cold prefetch's CPU (four
/// axes per JPEG thumbnail, the two chroma planes' the same pair), and the same geometry comes
/// back all the time: photos from one provider share their rendition's width and often its
/// height, and a grid asks one size. A table is a function of its key alone, so a kept one is
/// exactly what computing it again would give. A few recent tables are kept (`capacity`,
/// oldest dropped first) and none past `largestTable` bytes: a thumbnail's tables take a few
/// KiB, a huge target's would not be worth keeping. Thread-safe (`LockedState`): decodes run
/// on several threads.
final class ResamplerWeightsCache: Sendable {
    private struct Key: Hashable {
        var source: Int
        var target: Int
        var filter: Resampler.Filter
    }

    private struct State {
        var tables: [Key: Resampler.Weights] = [:]
        var order: Deque<Key> = []
    }

    /// Tables kept at most.
    let capacity: Int
    /// The largest table kept, in bytes of weights.
    static let largestTable = 64 << 10
    private let state = LockedState(State())

    /// A cache keeping at most `capacity` tables.
    init(capacity: Int = 16) {
        self.capacity = max(1, capacity)
    }

    /// The weights resizing `source` samples to `target` with `filter`: kept ones, or computed
    /// (outside the lock) and kept.
    func weights(source: Int, target: Int, filter: Resampler.Filter) -> Resampler.Weights {
        let key = Key(source: source, target: target, filter: filter)
        if let kept = state.withLock({ $0.tables[key] }) { return kept }
        let computed = Resampler.weights(source: source, target: target, filter: filter)
        guard computed.values.count * MemoryLayout<Int16>.size <= Self.largestTable else { return computed }
        state.withLock { s in
            guard s.tables.updateValue(computed, forKey: key) == nil else { return }
            s.order.append(key)
            while s.order.count > capacity, let oldest = s.order.popFirst() { s.tables[oldest] = nil }
        }
        return computed
    }

    /// Tables kept now.
    var count: Int { state.withLock { $0.tables.count } }
}
