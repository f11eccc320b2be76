extension Methods {
    /// `cancel`: cancels a pending request of the same session, which then answers 1007
    /// (`reason: "cancelled"`).
    public enum Cancel: RPCMethod {
        public typealias Params = CancelParams
        public typealias Result = CancelledResult
        public static let name = MethodName.cancel
    }
}

/// Params of `cancel`.
public struct CancelParams: RPCParams, Hashable {
    /// The id of the request to cancel, as it was sent.
    public var id: RequestID

    public init(id: RequestID) {
        self.id = id
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case id }
}

/// The answer of `cancel`, `thumbnail.recycle` and `download.cancel`: false when there was
/// nothing pending to cancel (already answered, unknown, or finished), so cancelling twice
/// is harmless.
public struct CancelledResult: Codable, Sendable, Hashable {
    /// True when something pending was cancelled.
    public var cancelled: Bool

    public init(cancelled: Bool) {
        self.cancelled = cancelled
    }
}
