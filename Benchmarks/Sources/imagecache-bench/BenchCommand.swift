import ArgumentParser

/// The benchmark runner. Each area is a subcommand in its own file; the scripts in
/// Benchmarks/scripts/ run the peer tools beside it and put the figures side by side.
/// An `@main` async root, so that async subcommands' `run()` is the one that runs.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagecache-bench",
        abstract: "Measure imagecached's parts; compare with peer tools via Benchmarks/scripts/.",
        subcommands: BenchCommand.areas
    )

    /// Every benchmark area. Add one line per area.
    static let areas: [any ParsableCommand.Type] = [
        ThumbnailBenchmark.self,
        FetchBenchmark.self,
        ShapingProxy.self,
        CacheBenchmark.self,
        HelloBenchmark.self,
        DownloadBenchmark.self,
        ShowBenchmark.self,
        FlingBenchmark.self,
        SoakBenchmark.self,
        FootprintBenchmark.self,
        VerifyBenchmark.self,
        BlurHashBenchmark.self,
        ChaosSoakBenchmark.self,
        MemcachedRoundTripBenchmark.self,
        ThumbnailCPUBenchmark.self,
    ]
}
