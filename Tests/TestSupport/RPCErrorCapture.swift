import ImageCacheProtocol

/// The `RPCError` a throwing call ended with: nil when it did not throw, and an `internal`
/// error naming what was thrown when it threw something else, so a test asserting on a
/// kind fails with a readable message rather than passing by accident.
public func rpcError(_ body: () throws -> Void) -> RPCError? {
    do {
        try body()
        return nil
    } catch let error as RPCError {
        return error
    } catch {
        return RPCError(.internal, "unexpected \(error)")
    }
}

/// The async form of `rpcError(_:)`.
public func rpcError(_ body: () async throws -> Void) async -> RPCError? {
    do {
        try await body()
        return nil
    } catch let error as RPCError {
        return error
    } catch {
        return RPCError(.internal, "unexpected \(error)")
    }
}
