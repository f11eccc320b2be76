import ImageCacheKit

// Waits the tests make on the engine's observable events, kept in the test support rather
// than on the production types: each wakes on the event the type publishes and re-reads
// the figure it waits for.

extension ImagePipeline {
    /// Returns once at least `count` demands wait on running fetches (a second party has joined).
    package func waitForActiveDemands(atLeast count: Int) async throws {
        try await demandChanges.wait { [self] _ in activeDemands >= count }
    }
}

extension DecodeBudget {
    /// Returns once at least `count` tasks wait for the budget.
    package func waitForWaiting(atLeast count: Int) async throws {
        try await queueChanges.wait { [self] _ in waiting >= count }
    }
}

extension DiskCache {
    /// Returns once the background sweep `init` started has finished.
    package func waitForSweep() async {
        await backgroundSweep?.value
    }
}
