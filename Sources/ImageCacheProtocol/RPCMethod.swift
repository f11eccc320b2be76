/// Ties a method name to its params and result types, so a call site cannot send one
/// method's params and decode another's result.
///
/// The client's `call(_:_:)` and the server's router (`RPCRouter.register`) are both generic
/// over this, which is what keeps the two ends of the socket from drifting apart: a handler
/// gets `Params` and must give back `Result`.
public protocol RPCMethod: Sendable {
    /// What the client sends; decoded strictly by the server (`StrictParamsDecoder`).
    associatedtype Params: RPCParams
    /// What the daemon answers on success.
    associatedtype Result: Codable & Sendable
    /// The name on the wire.
    static var name: MethodName { get }
}

/// The params of one method: named fields only, with the contract's defaults.
///
/// Decoded by `StrictParamsDecoder`, which refuses a name the type does not read (`"pag": 2`)
/// instead of silently using the default: a client bug surfaces as -32602 naming the field,
/// not as a wrong page. When the type's `CodingKeys` are `CaseIterable`, the refusal lists
/// the accepted names.
public protocol RPCParams: Codable, Sendable {
    /// Checks what the types alone cannot (ranges, mutually exclusive fields); throws
    /// `invalid_params` naming the field. Called once per request, by
    /// `StrictParamsDecoder.decodeAndValidate` (what the server's router runs), never by a
    /// handler.
    func validate() throws(RPCError)
}

extension RPCParams {
    /// Most params need no check beyond their types.
    public func validate() throws(RPCError) {}
}

/// The params of a notification the daemon sends, tied to its name so the server cannot
/// send a payload under the wrong name and the client can decode it by its name.
public protocol RPCNotificationPayload: Codable, Sendable {
    /// The name on the wire.
    static var name: NotificationName { get }
}

/// Namespace of the method descriptors (`Methods.Search`, `Methods.Download`, …).
///
/// Each descriptor is an empty enum: it exists only at the type level, to pair a name with
/// its params and result.
public enum Methods {}

/// Params of methods that take none (`hello`, `stats`, `download.list`).
///
/// Still strict: any param sent to such a method is an unknown name and gets -32602.
public struct NoParams: RPCParams, Hashable {
    /// No params, for calling a method that takes none.
    public init() {}
    /// Accepts `{}` only: opening the container lets a strict decoder see the object's
    /// members, every one of which is then reported as an unknown param.
    public init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: NoKeys.self)
    }
    /// Writes `{}`.
    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: NoKeys.self)
    }
    private enum NoKeys: CodingKey, CaseIterable {}
}
