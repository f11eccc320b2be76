#if canImport(Glibc)
import Glibc
#endif
import NIOCore

extension PeerCredentials {
    /// `struct ucred` as the kernel fills it for SO_PEERCRED (pid, uid, gid: 3 × 32 bits).
    private struct KernelCredentials {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    /// Room for the peer's supplementary groups (SO_PEERGROUPS, Linux 4.13+): 256 gids. A peer
    /// in more groups is seen with none (fewer rights, never more), and logged so.
    private typealias KernelGroups = InlineArray<256, UInt32>

    /// SO_PEERGROUPS (not in Glibc's module: `asm-generic/socket.h`).
    private static let peerGroupsOption: Int32 = 59

    /// Reads SO_PEERCRED and SO_PEERGROUPS from a freshly accepted channel. Must run on the
    /// channel's event loop (the channel initializer does), where options are read synchronously.
    /// nil when the credentials cannot be read (the peer is then a stranger, `Requester`).
    static func read(from channel: any Channel) -> PeerCredentials? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let future: EventLoopFuture<KernelCredentials> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET), name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
        var credentials: PeerCredentials?
        future.assumeIsolated().whenSuccess { raw in
            credentials = PeerCredentials(pid: raw.pid, uid: raw.uid, gid: raw.gid)
        }
        guard var found = credentials else { return nil }
        let groups: EventLoopFuture<KernelGroups> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET), name: NIOBSDSocket.Option(rawValue: peerGroupsOption))
        groups.assumeIsolated().whenSuccess { raw in
            found.groups = Self.groups(from: raw)
            found.groupsRead = true
        }
        return found
    }

    /// The groups in the kernel's answer. The socket library hands back the whole buffer, zeros
    /// after the kernel's part, not its length; the kernel's list is sorted ascending, so the
    /// zeros after the last non-zero gid are padding. A list that is all zeros cannot be told
    /// from one holding only gid 0: it is read as empty (fewer rights, never more).
    static func groups(from raw: InlineArray<256, UInt32>) -> [UInt32] {
        var last = -1
        for index in raw.indices where raw[index] != 0 { last = index }
        guard last >= 0 else { return [] }
        return (0...last).map { raw[$0] }
    }
}
