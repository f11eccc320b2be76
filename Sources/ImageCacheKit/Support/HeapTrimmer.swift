#if canImport(Glibc)
import Glibc
#endif

/// Gives the heap's free pages back to the kernel after the memory tier has turned over or
/// decodes have ended.
///
/// Why: thumbnails of tens of kilobytes come and go in the memory tier between larger
/// short-lived buffers (bodies, decodes), and glibc returns free memory to the kernel only
/// from the top of a heap (`M_TRIM_THRESHOLD`); the free holes in between stay resident. In
/// the soak of docs/benchmarks.md (`memory_limit = 64MiB`, 10 000 thumbnails) that
/// fragmentation was 30–45 MiB on top of the limit. Decode buffers up to
/// `BodyBufferAllocator.heapAllocationLimit` come from the heap too (the next decode reuses
/// their pages), so the ticks after a burst of decodes give those back as well.
/// `malloc_trim(0)` releases every whole free page of every arena (`madvise`): 1–6 ms for such
/// a heap (median 2 ms), during which other threads' allocations past their thread caches
/// wait. Doing it at most once per tick, and only when there was turnover since the last one
/// (the `activity` counter moved), keeps an idle daemon idle and a busy one close to
/// `memory_limit`.
public final class HeapTrimmer: Sendable {
    private let activity: @Sendable () -> Int
    private let trim: @Sendable () -> Void
    private let lastSeen: LockedState<Int>

    /// A trimmer that trims when `activity` (a counter that only grows, such as the memory
    /// tier's evictions) has moved since the last tick; `trim` is glibc's `malloc_trim(0)`
    /// unless a test gives another.
    public init(activity: @escaping @Sendable () -> Int, trim: @escaping @Sendable () -> Void = { _ = HeapTrimmer.releaseFreePages() }) {
        self.activity = activity
        self.trim = trim
        lastSeen = LockedState(activity())
    }

    /// Trims when there was activity since the last tick; returns whether it did.
    @discardableResult
    package func tick() -> Bool {
        let now = activity()
        let moved = lastSeen.withLock { last in
            defer { last = now }
            return now != last
        }
        if moved { trim() }
        return moved
    }

    /// Ticks every `interval` until the task is cancelled, trimming on a blocking-work thread
    /// (a trim walks every arena: it never runs on the cooperative pool or an event loop).
    public func run(every interval: Duration) async {
        while (try? await Task.sleep(for: interval)) != nil {
            _ = await BlockingIO.run { [self] in tick() }
        }
    }

    /// glibc's `malloc_trim(0)`; nothing where it does not exist (not glibc). Returns whether
    /// it ran.
    @discardableResult
    public static func releaseFreePages() -> Bool {
        #if canImport(Glibc)
        // malloc_trim is declared in <malloc.h>, which Swift's Glibc module does not import.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return false }
        typealias MallocTrim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        return true
        #else
        return false
        #endif
    }
}
