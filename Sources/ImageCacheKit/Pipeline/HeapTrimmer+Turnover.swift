extension HeapTrimmer {
    /// The engine's turnover, what a daemon's trimmer ticks on: the memory tier's evictions
    /// plus the decodes that ended (each leaves its buffers free in the heap). Here, beside
    /// the pipeline that owns both, since the trimmer itself knows neither.
    package static func turnover(of cache: ImageCache, decodes: DecodeBudget) -> @Sendable () -> Int {
        { cache.statistics.memory.evictions &+ decodes.ended }
    }
}
