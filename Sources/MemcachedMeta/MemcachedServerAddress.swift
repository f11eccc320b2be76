/// One memcached node. Parsing `host:port` from configuration is the configuration's
/// (`SharedTierSettings.Server` in the engine), so this target stays free of it.
public struct MemcachedServerAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, an IPv6 host in brackets: the node's name on the ketama ring.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
