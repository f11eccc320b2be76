/// Where the daemon's socket is when neither `--socket` nor `socket =` says (docs/protocol.md, "Transport").
///
/// A pure function of the environment so the daemon and every client compute the same
/// answer, and so tests can check it without touching the real environment.
public enum SocketPath {
    /// The socket's file name inside a runtime directory.
    public static let fileName = "imagecached.sock"

    /// The system daemon's socket (the system unit's `RuntimeDirectory=imagecached`).
    public static let system = "/run/imagecached/imagecached.sock"

    /// The user daemon's socket, `$XDG_RUNTIME_DIR/imagecached.sock`, or nil when
    /// `XDG_RUNTIME_DIR` is unset, empty or relative (the XDG spec says to ignore a relative one).
    public static func user(environment: [String: String]) -> String? {
        guard let dir = environment["XDG_RUNTIME_DIR"], dir.hasPrefix("/") else { return nil }
        return dir.hasSuffix("/") ? dir + fileName : dir + "/" + fileName
    }

    /// The path a daemon binds by default: the user socket when the session has a runtime
    /// directory (a user daemon), else the system socket (a system service has no
    /// `XDG_RUNTIME_DIR`).
    public static func daemonDefault(environment: [String: String]) -> String {
        user(environment: environment) ?? system
    }

    /// The paths a client tries, in order: the user daemon's, then the system daemon's. A
    /// client connects to the first that exists, so a user without a daemon of their own
    /// reaches the system one.
    public static func clientCandidates(environment: [String: String]) -> [String] {
        if let user = user(environment: environment) { return [user, system] }
        return [system]
    }
}
