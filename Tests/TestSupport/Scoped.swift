/// Runs `body` with `resource`, then `finish(resource)` whether `body` returned or threw, and
/// gives back what `body` returned or rethrows what it threw.
///
/// The one shape of every fixture's `with…` form: a test whose `try` throws between starting
/// a daemon, a simulator or a child process and finishing it would otherwise leave them
/// running (and their folders behind) for the rest of the test process. Swift's `defer` cannot
/// await, so the finishing has to wrap the body.
public func finishing<Resource, Result>(
    _ resource: Resource,
    with finish: (Resource) async -> Void,
    _ body: (Resource) async throws -> Result
) async throws -> Result {
    let result: Result
    do {
        result = try await body(resource)
    } catch {
        await finish(resource)
        throw error
    }
    await finish(resource)
    return result
}
