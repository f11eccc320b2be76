#if canImport(Glibc)
import Glibc
#endif
import Synchronization

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

    /// The device and inode of the file we created, so that at exit we remove our own
    /// socket file and never one a newer daemon has put there since.
    private let createdFile: (device: UInt64, inode: UInt64)?
    /// The lock file held from the probe until the server listens.
    private let lockDescriptor: Mutex<CInt?>

    init(descriptor: CInt, path: String?, isInherited: Bool, createdFile: (device: UInt64, inode: UInt64)?, lockDescriptor: CInt?) {
        self.descriptor = descriptor
        self.path = path
        self.isInherited = isInherited
        self.createdFile = createdFile
        self.lockDescriptor = Mutex(lockDescriptor)
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

    /// Removes the socket file at exit, if it is still the one this process created.
    public func removeSocketFile() {
        guard let path, let createdFile else { return }
        var info = stat()
        guard lstat(path, &info) == 0, UInt64(info.st_dev) == createdFile.device, UInt64(info.st_ino) == createdFile.inode else { return }
        unlink(path)
    }

    deinit {
        releaseLock()
    }
}
