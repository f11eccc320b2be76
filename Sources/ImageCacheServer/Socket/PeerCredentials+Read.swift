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

    /// Reads SO_PEERCRED from a freshly accepted channel. Must run on the channel's event
    /// loop (the channel initializer does), where the option is read synchronously.
    static func read(from channel: any Channel) -> PeerCredentials? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let future: EventLoopFuture<KernelCredentials> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET), name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
        var credentials: PeerCredentials?
        future.assumeIsolated().whenSuccess { raw in
            credentials = PeerCredentials(pid: raw.pid, uid: raw.uid, gid: raw.gid)
        }
        return credentials
    }
}
