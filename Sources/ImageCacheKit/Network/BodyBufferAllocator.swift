#if canImport(Glibc)
import Glibc
#endif

/// Process-wide glibc malloc tuning for the daemon's short-lived large buffers (response
/// bodies kept in memory, decode buffers).
///
/// Why: glibc serves every allocation over 128 KiB with a fresh `mmap` and returns it to the
/// kernel on `free`, so each 1 MB body costs ~256 page faults and the zeroing of every page it
/// touches. Profiles of the fetch benchmark (docs/benchmarks.md, `## Network`) showed that as
/// most of the engine's CPU for 1 MB bodies. Raising the mmap threshold keeps such buffers in
/// the heap, where the next body reuses the already-mapped pages; the trim threshold bounds
/// what a heap keeps mapped once the buffers are freed, so memory after a burst stays within
/// `maxCachedBytes` per heap (the figures and the RSS are in docs/benchmarks.md).
///
/// One arena: glibc gives each thread that contends for the heap an arena of its own (up to
/// eight per core), and free memory in one arena cannot serve another. The daemon's threads
/// (event loops, the engine's, the cooperative pool, blocking I/O) each allocate thumbnails,
/// bodies and decode buffers, so under the soak of docs/benchmarks.md (`## Thumbnails`, (c))
/// the free memory spread over arenas was ~25 MiB above `memory_limit`; with one arena (and
/// `HeapTrimmer`) the daemon stays inside the bound. Small allocations still come from each
/// thread's cache without the arena's lock.
///
/// It is a choice for the whole process, so the library never makes it by itself: the daemon's
/// entry point calls `configure()` once at start-up; the benchmarks call it too,
/// so they measure what the daemon runs.
public enum BodyBufferAllocator {
    /// Allocations up to this size come from the heap instead of their own `mmap`: above the
    /// 1 MB bodies of the benchmark and the decode buffers of photos up to about 16 MP, the
    /// largest being a progressive JPEG's coefficients (128 B per 8×8 block of a component: a
    /// 2400 × 1600 photo's luma takes 7.7 MB, whose page faults, zeroing and unmapping were
    /// 8 % of a progressive thumbnail's CPU); larger ones are still mapped and unmapped on
    /// their own. `HeapTrimmer` gives the pages back once decoding pauses.
    package static let heapAllocationLimit: Int32 = 32 << 20
    /// Free memory a heap keeps mapped at its top before glibc gives it back: one full set of
    /// sixteen 1 MB in-flight bodies (`max_connections` = 16).
    package static let maxCachedBytes: Int32 = 16 << 20

    /// Arenas the process may use (`M_ARENA_MAX`).
    package static let arenas: Int32 = 1

    /// Sets glibc's `M_MMAP_THRESHOLD`, `M_TRIM_THRESHOLD` and `M_ARENA_MAX` (see the type's comment). Returns
    /// false where mallopt is not available (not glibc): nothing is changed then.
    @discardableResult
    public static func configure() -> Bool {
        #if canImport(Glibc)
        // mallopt is declared in <malloc.h>, which Swift's Glibc module does not import; it is
        // looked up by name instead of adding a C target for one call.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let trimThreshold: Int32 = -1  // M_TRIM_THRESHOLD in <malloc.h>
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
        let arenaMax: Int32 = -8  // M_ARENA_MAX
        // Each is made whatever the others did.
        let results = [mallopt(mmapThreshold, heapAllocationLimit), mallopt(trimThreshold, maxCachedBytes),
                       mallopt(arenaMax, arenas)]
        return results.allSatisfy { $0 == 1 }
        #else
        return false
        #endif
    }
}
