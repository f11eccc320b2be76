/// The JSON-RPC 2.0 messages the daemon sends, one per line. (Requests are read by the
/// server's own parsers, never decoded into a type of this module.)

/// The one answer to a request: either `result` or `error`, never both.
public struct RPCResponse: Sendable, Hashable, Codable {
    /// Always "2.0".
    public var jsonrpc: String
    /// Null only when the request's id could not be read (parse errors, invalid requests).
    public var id: RequestID?
    /// The answer on success (nil when `error` is set).
    public var result: JSONValue?
    /// The error on failure (nil when `result` is set).
    public var error: RPCError?

    public init(id: RequestID?, result: JSONValue) {
        self.jsonrpc = "2.0"
        self.id = id
        self.result = result
        self.error = nil
    }

    public init(id: RequestID?, error: RPCError) {
        self.jsonrpc = "2.0"
        self.id = id
        self.result = nil
        self.error = error
    }

    enum CodingKeys: String, CodingKey { case jsonrpc, id, result, error }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(jsonrpc, forKey: .jsonrpc)
        // JSON-RPC requires "id": null when the id is unknown, so encode it explicitly.
        if let id { try c.encode(id, forKey: .id) } else { try c.encodeNil(forKey: .id) }
        if let error { try c.encode(error, forKey: .error) } else { try c.encode(result ?? .null, forKey: .result) }
    }
}

/// A message from the daemon without an id: progress, dimensions, finished/failed events.
public struct RPCNotification: Sendable, Hashable, Codable {
    /// Always "2.0".
    public var jsonrpc: String
    /// The notification name (see `NotificationName`).
    public var method: String
    /// Its payload, one of the `RPCNotificationPayload` types.
    public var params: JSONValue?

    public init(method: String, params: JSONValue?) {
        self.jsonrpc = "2.0"
        self.method = method
        self.params = params
    }
}
