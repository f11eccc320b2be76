import ImageCacheKit
import ImageCacheProtocol
import ImageCacheServer

/// The wire error a throwing engine call ends with, as a client would read it (through the
/// server's one mapping, `WireErrorMapping`): nil when it did not throw, and an `internal`
/// error naming what was thrown when the mapping does not know it, so a test asserting on a
/// kind fails with a readable message rather than passing by accident.
func rpcError(_ body: () throws -> Void) -> RPCError? {
    do {
        try body()
        return nil
    } catch {
        return wire(error)
    }
}

/// The async form of `rpcError(_:)`.
func rpcError(_ body: () async throws -> Void) async -> RPCError? {
    do {
        try await body()
        return nil
    } catch {
        return wire(error)
    }
}

/// `error` through the wire mapping, or an `internal` error naming it when the mapping does
/// not know it.
func wire(_ error: any Error) -> RPCError {
    WireErrorMapping.mapped(error) as? RPCError ?? RPCError(.internal, "unexpected \(error)")
}
