import Foundation

/// Why a client could not get an answer, other than the daemon answering an error (which is
/// thrown as the daemon's own `RPCError`).
///
/// Each message says what to do next, because it is what a person sees in the CLI when the
/// daemon is not there: the socket path tried and how to start the daemon.
public enum ImageCacheClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens on the socket (`ENOENT`: no file; `ECONNREFUSED`: a stale file).
    case daemonNotRunning(socketPath: String, reason: String)
    /// The socket exists but this user may not connect to it (`EACCES`).
    case permissionDenied(socketPath: String)
    /// Connecting failed for another reason (path too long, not a directory…).
    case connectFailed(socketPath: String, reason: String)
    /// The daemon closed the connection (or it broke) before answering.
    case connectionClosed(socketPath: String, reason: String)
    /// `close()` was called on this connection; calls pending then, or made after, fail with this.
    case closedByClient
    /// The daemon answered something this client cannot read (a bug on one side, or a
    /// daemon of another protocol revision).
    case invalidResponse(method: String, detail: String)

    public var description: String {
        switch self {
        case .daemonNotRunning(let path, let reason):
            return """
            imagecached is not running: nothing listens on \(path) (\(reason)).
            Start it with `imagecached` (in the foreground) or `systemctl --user start imagecached.socket` \
            (as a user service; `sudo systemctl start imagecached.socket` for the system one), \
            or pass --socket PATH if it listens elsewhere.
            """
        case .permissionDenied(let path):
            return """
            permission denied connecting to \(path): the socket belongs to another user. \
            For the system daemon, join its group (`sudo usermod -aG imagecached $USER`, then log in again).
            """
        case .connectFailed(let path, let reason):
            return "cannot connect to imagecached at \(path): \(reason)"
        case .connectionClosed(let path, let reason):
            return "the connection to imagecached at \(path) closed before it answered (\(reason))"
        case .closedByClient:
            return "the connection to imagecached was closed by this client"
        case .invalidResponse(let method, let detail):
            return "imagecached answered \(method) with something this client cannot read: \(detail)"
        }
    }
}
