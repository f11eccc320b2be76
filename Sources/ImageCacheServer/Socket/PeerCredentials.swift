/// The peer process of a connection, from SO_PEERCRED and SO_PEERGROUPS: logged per
/// connection so an operator can tell who used the daemon, and what a shared daemon decides by
/// (`requester`).
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The peer's process id (of the process that connected; it may have exited since).
    public var pid: Int32
    /// The peer's effective user id: who is using the daemon.
    public var uid: UInt32
    /// The peer's effective group id.
    public var gid: UInt32
    /// The peer's supplementary groups when it connected (empty when unread).
    public var groups: [UInt32]
    /// Whether the kernel told the supplementary groups (SO_PEERGROUPS).
    public var groupsRead: Bool

    /// Credentials as the kernel reported them.
    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = [], groupsRead: Bool = false) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
        self.groupsRead = groupsRead
    }

    /// `pid=… uid=… gid=…`, as it appears in the connection log line.
    public var description: String { "pid=\(pid) uid=\(uid) gid=\(gid)" }
}
