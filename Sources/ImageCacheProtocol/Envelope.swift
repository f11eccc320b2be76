/// The JSON-RPC 2.0 messages that cross the socket, one per line.
///
/// Requests carry `params` as raw JSON so the framing never needs to know a method's
/// shape; each handler decodes its own typed params.
public struct RPCRequest: Sendable, Hashable, Codable {
    /// Always "2.0"; the server refuses anything else with -32600.
    public var jsonrpc: String
    /// Absent for a JSON-RPC notification, which is carried out and never answered.
    public var id: RequestID?
    /// The method name (see `MethodName`).
    public var method: String
    /// Named params, decoded per method by `ParamsDecoder`; nil when absent.
    public var params: JSONValue?

    public init(id: RequestID?, method: String, params: JSONValue? = nil) {
        self.jsonrpc = "2.0"
        self.id = id
        self.method = method
        self.params = params
    }
}

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
