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
package struct EnvironmentDefaults: Sendable, Equatable {
    /// `$XDG_RUNTIME_DIR/imagecached.sock` for a user daemon, else
    /// `/run/imagecached/imagecached.sock` (the system unit's `RuntimeDirectory=`).
    public var socketPath: String
    /// Whether `XDG_RUNTIME_DIR` gave the socket's folder (false: the system path was chosen,
    /// which a user daemon cannot create — the start-up error then says so).
    package var hasRuntimeDirectory: Bool
    /// `$CACHE_DIRECTORY` under systemd (its first entry when colon-separated), else
    /// `$XDG_CACHE_HOME/imagecached`, else `~/.cache/imagecached`.
    package var cacheDirectory: String
    /// `$STATE_DIRECTORY` under systemd (its first entry when colon-separated), else
    /// `$XDG_STATE_HOME/imagecached`, else `~/.local/state/imagecached`.
    package var stateDirectory: String
    /// `$XDG_DOWNLOAD_DIR`, else the one in `~/.config/user-dirs.dirs`, else `~/Downloads`.
    package var downloadDirectory: String
    /// `$HOME`, else the user database's home of the current user; `~` in paths expands to it.
    package var homeDirectory: String

    /// Resolves every default from `environment`.
    public init(environment: [String: String]) {
        let home = Self.homeDirectory(environment: environment)
        homeDirectory = home
        let runtime = Self.absolute(environment["XDG_RUNTIME_DIR"])
        hasRuntimeDirectory = runtime != nil
        socketPath = runtime.map { Self.join($0, "imagecached.sock") } ?? "/run/imagecached/imagecached.sock"
        cacheDirectory = Self.directory(systemd: "CACHE_DIRECTORY", xdg: "XDG_CACHE_HOME", orUnder: ".cache",
                                        environment: environment, home: home)
        stateDirectory = Self.directory(systemd: "STATE_DIRECTORY", xdg: "XDG_STATE_HOME", orUnder: ".local/state",
                                        environment: environment, home: home)
        downloadDirectory = Self.absolute(environment["XDG_DOWNLOAD_DIR"])
            ?? Self.userDirsDownloadDirectory(environment: environment, home: home)
            ?? Self.join(home, "Downloads")
    }

    /// `XDG_DOWNLOAD_DIR` from the user's `user-dirs.dirs` (`$XDG_CONFIG_HOME/user-dirs.dirs`,
    /// else `~/.config/user-dirs.dirs`), as xdg-user-dirs writes it for desktops in every
    /// language (`"$HOME/Téléchargements"`); nil when the file or the line is absent.
    static func userDirsDownloadDirectory(environment: [String: String], home: String) -> String? {
        let base = absolute(environment["XDG_CONFIG_HOME"]) ?? join(home, ".config")
        let path = join(base, "user-dirs.dirs")
        // A small text file; anything larger is not one xdg-user-dirs wrote.
        guard let contents = readSmallFile(path, limit: 64 * 1024) else { return nil }
        return parseUserDirs(contents, key: "XDG_DOWNLOAD_DIR", home: home)
    }

    /// The value of `key` in a `user-dirs.dirs` file: a line `KEY="VALUE"` where VALUE is an
    /// absolute path or starts with `$HOME/` (the only forms the format allows); `\"`, `\\`
    /// and `\$` are unescaped. Nil when absent or in another form (the format says to ignore it).
    package static func parseUserDirs(_ contents: String, key: String, home: String) -> String? {
        for rawLine in contents.split(whereSeparator: \.isNewline) {
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            guard line.hasPrefix(key + "=\"") else { continue }
            var value = ""
            var escaped = false
            var closed = false
            for character in line.dropFirst(key.count + 2) {
                if escaped {
                    value.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    closed = true
                    break
                } else {
                    value.append(character)
                }
            }
            guard closed else { return nil }
            if value.hasPrefix("$HOME/") { return join(home, String(value.dropFirst("$HOME/".count))) }
            if value == "$HOME" { return home }
            return value.hasPrefix("/") ? value : nil
        }
        return nil
    }

    private static func readSmallFile(_ path: String, limit: Int) -> String? {
        // The user's own file: a dotfiles symlink is theirs to make, so it is followed.
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count <= limit {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, limit + 1 - count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            count += n
        }
        guard count <= limit else { return nil }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// The user's configuration file: `$XDG_CONFIG_HOME/imagecached/cache.conf`, else
    /// `~/.config/imagecached/cache.conf`.
    package static func userConfigPath(environment: [String: String]) -> String {
        let base = absolute(environment["XDG_CONFIG_HOME"]) ?? join(homeDirectory(environment: environment), ".config")
        return join(base, "imagecached/cache.conf")
    }

    /// `$HOME` when absolute, else the home directory the user database gives this user
    /// (a daemon started by systemd may have no `HOME`).
    package static func homeDirectory(environment: [String: String]) -> String {
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

    /// The daemon's folder of one kind: systemd's `$<systemd>` (its first entry when
    /// colon-separated), else `$<xdg>/imagecached`, else `~/<fallback>/imagecached`.
    private static func directory(systemd: String, xdg: String, orUnder fallback: String,
                                  environment: [String: String], home: String) -> String {
        if let first = environment[systemd]?.split(separator: ":").first.map(String.init),
           let directory = absolute(first) {
            return directory
        }
        if let base = absolute(environment[xdg]) { return join(base, "imagecached") }
        return join(home, fallback + "/imagecached")
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
    package var resolvedSocketPath: String { daemon.socket ?? environmentDefaults.socketPath }

    /// The cache folder: `cache_dir =` when set, else the default.
    package var resolvedCacheDirectory: String { cache.cacheDir ?? environmentDefaults.cacheDirectory }

    /// The state folder: `state_dir =` when set, else the default.
    package var resolvedStateDirectory: String { daemon.stateDir ?? environmentDefaults.stateDirectory }

    /// The roots `download` may write under, the default destination first.
    package var resolvedDownloadRoots: [String] {
        downloads.downloadDir.isEmpty ? [environmentDefaults.downloadDirectory] : downloads.downloadDir
    }
}
