#if canImport(Glibc)
import ImageCacheKit
import Glibc
#endif

/// A bound stream socket ready for the server to listen on: one the daemon created at its
/// socket path (`SocketBinder`), or one inherited from systemd (`SocketActivation`).
///
/// Both paths end in NIO's bound-socket bootstrap, so the server has one way to start.
public final class ListeningSocket: Sendable {
    /// The bound socket's descriptor; NIO owns it once the server starts.
    public let descriptor: CInt
    /// The socket's path, when known (for messages and `READY` status).
    public let path: String?
    /// Whether systemd created the socket (then the daemon never removes its file).
    public let isInherited: Bool

    /// The identity of the file we created, so that at exit we remove our own socket file and
    /// never one a newer daemon (or anyone) has put there since.
    private let createdFile: FileIdentity?
    /// The lock file held from the probe until the server listens.
    private let lockDescriptor: LockedState<CInt?>

    init(descriptor: CInt, path: String?, isInherited: Bool, createdFile: FileIdentity?, lockDescriptor: CInt?) {
        self.descriptor = descriptor
        self.path = path
        self.isInherited = isInherited
        self.createdFile = createdFile
        self.lockDescriptor = LockedState(lockDescriptor)
    }

    /// Releases the lock taken before probing; called once the server listens, so that a
    /// second daemon starting meanwhile probes a socket that already answers.
    public func releaseLock() {
        let fd = lockDescriptor.withLock { fd -> CInt? in
            defer { fd = nil }
            return fd
        }
        if let fd { close(fd) }
    }

    /// Removes the socket file at exit, if it is still the one this process created, and the
    /// lock file beside it, both under the lock (so a daemon starting meanwhile waits, then
    /// finds neither).
    public func removeSocketFile() {
        guard let path, let createdFile else { return }
        releaseLock()
        guard let lock = try? SocketLock.acquire(path) else {
            if createdFile.isStill(atPath: path) { unlink(path) }
            return
        }
        defer { close(lock) }
        if createdFile.isStill(atPath: path) { unlink(path) }
        SocketLock.remove(path)
    }

    deinit {
        releaseLock()
    }
}
