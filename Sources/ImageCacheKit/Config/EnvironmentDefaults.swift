#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the contract's defaults for unset paths resolve to in one environment.
///
/// Worked out once from an environment dictionary (never the process environment read
/// deep inside), so tests can pass their own and the daemon passes
/// `ProcessInfo.processInfo.environment` at its edge. XDG variables holding a relative path
/// are ignored, as the XDG Base Directory specification requires.
public struct EnvironmentDefaults: Sendable, Equatable {
    /// `$XDG_RUNTIME_DIR/imagecached.sock` for a user daemon, else
    /// `/run/imagecached/imagecached.sock` (the system unit's `RuntimeDirectory=`).
    public var socketPath: String
    /// `$CACHE_DIRECTORY` under systemd (its first entry when colon-separated), else
    /// `$XDG_CACHE_HOME/imagecached`, else `~/.cache/imagecached`.
    public var cacheDirectory: String
    /// `$XDG_DOWNLOAD_DIR`, else `~/Downloads`.
    public var downloadDirectory: String
    /// `$HOME`, else the user database's home of the current user; `~` in paths expands to it.
    public var homeDirectory: String

    /// Resolves every default from `environment`.
    public init(environment: [String: String]) {
        let home = Self.homeDirectory(environment: environment)
        homeDirectory = home
        socketPath = Self.absolute(environment["XDG_RUNTIME_DIR"]).map { Self.join($0, "imagecached.sock") }
            ?? "/run/imagecached/imagecached.sock"
        if let systemd = environment["CACHE_DIRECTORY"]?.split(separator: ":").first.map(String.init),
           let directory = Self.absolute(systemd) {
            cacheDirectory = directory
        } else if let xdg = Self.absolute(environment["XDG_CACHE_HOME"]) {
            cacheDirectory = Self.join(xdg, "imagecached")
        } else {
            cacheDirectory = Self.join(home, ".cache/imagecached")
        }
        downloadDirectory = Self.absolute(environment["XDG_DOWNLOAD_DIR"]) ?? Self.join(home, "Downloads")
    }

    /// The user's configuration file: `$XDG_CONFIG_HOME/imagecached/cache.conf`, else
    /// `~/.config/imagecached/cache.conf`.
    public static func userConfigPath(environment: [String: String]) -> String {
        let base = absolute(environment["XDG_CONFIG_HOME"]) ?? join(homeDirectory(environment: environment), ".config")
        return join(base, "imagecached/cache.conf")
    }

    /// `$HOME` when absolute, else the home directory the user database gives this user
    /// (a daemon started by systemd may have no `HOME`).
    public static func homeDirectory(environment: [String: String]) -> String {
        if let home = absolute(environment["HOME"]) { return home }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let status = getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result)
        if status == 0, result != nil, let directory = entry.pw_dir {
            let path = String(cString: directory)
            if path.hasPrefix("/") { return path }
        }
        return "/"
    }

    private static func absolute(_ value: String?) -> String? {
        guard let value, value.hasPrefix("/") else { return nil }
        return value
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}

extension CacheConfiguration {
    /// The socket to listen on: `socket =` (or `--socket`) when set, else the default.
    public var resolvedSocketPath: String { daemon.socket ?? environmentDefaults.socketPath }

    /// The cache folder: `cache_dir =` when set, else the default.
    public var resolvedCacheDirectory: String { cache.cacheDir ?? environmentDefaults.cacheDirectory }

    /// The roots `download` may write under, the default destination first.
    public var resolvedDownloadRoots: [String] {
        downloads.downloadDir.isEmpty ? [environmentDefaults.downloadDirectory] : downloads.downloadDir
    }
}
