import ImageCacheKit

/// The daemon's entry point: the process-wide heap settings first, then the command.
///
/// glibc reads them when a thread first allocates, so they are made before any thread other
/// than the main one exists: large short-lived buffers (bodies, decodes) stay in the heap
/// instead of each costing a fresh mmap, and all threads share one arena, so memory freed by
/// one serves the others (`BodyBufferAllocator` says why; the measurements are in
/// docs/benchmarks.md, `## Network` and `## Thumbnails` (c)).
@main
enum DaemonMain {
    static func main() async {
        BodyBufferAllocator.configure()
        await ImageCacheDaemonCommand.main()
    }
}
