import Foundation
import ImageCacheClient
import ImageCacheConfig

/// Finds the daemon's socket the way the daemon itself decides where to listen, so a
/// `socket =` in cache.conf needs no `--socket` on every command.
///
/// Order: `--socket`, `$IMAGECACHE_SOCKET`, `[daemon] socket` of the cache.conf the daemon
/// would read (`CacheConfiguration.load`, the daemon's own look-up: the user's file, then
/// the system one), then the defaults every client computes (`SocketPath`).
public enum SocketLookup {
    /// The path chosen, where it came from, and why an earlier source was passed over.
    public struct Choice: Sendable, Equatable {
        /// The socket to connect to.
        public var path: String
        /// `--socket`, `IMAGECACHE_SOCKET`, `socket = in FILE` or `the default`.
        public var source: String
        /// A cache.conf that exists but could not be read or parsed: said under `-v`, and
        /// with the error when nothing answers on the default socket.
        public var configProblem: String?
    }

    /// The environment variable that names the socket for every command of a shell.
    public static let environmentVariable = "IMAGECACHE_SOCKET"

    /// Resolves the socket from the flag, `environment` and the configuration files.
    public static func resolve(flag: String?, environment: [String: String],
                               systemConfigPath: String = CacheConfiguration.systemConfigPath,
                               fileExists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> Choice {
        if let flag, !flag.isEmpty { return Choice(path: flag, source: "--socket") }
        if let variable = environment[environmentVariable], !variable.isEmpty {
            return Choice(path: variable, source: environmentVariable)
        }
        var problem: String?
        do {
            // Only the socket is wanted: secrets are not the CLI's, so none are overlaid
            // from the environment (a key in it must not make a bad file look good, or the reverse).
            let configuration = try CacheConfiguration.load(explicitPath: nil, environment: configEnvironment(environment),
                                                            systemConfigPath: systemConfigPath)
            if let socket = configuration.daemon.socket, let file = configuration.sourcePath {
                return Choice(path: socket, source: "socket = in \(file)")
            }
        } catch {
            problem = "\(error)"
        }
        return Choice(path: ImageCacheConnection.defaultSocketPath(environment: environment, fileExists: fileExists),
                      source: "the default", configProblem: problem)
    }

    /// The environment the configuration is read with: paths (`HOME`, XDG) kept, the
    /// daemon's secret and credential variables left out.
    static func configEnvironment(_ environment: [String: String]) -> [String: String] {
        environment.filter { key, _ in key == "HOME" || key.hasPrefix("XDG_") }
    }

    /// What is wrong with a socket path that is not a socket, so the message says "a folder"
    /// rather than "connection refused"; nil when it is a socket or does not exist.
    public static func notASocket(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFSOCK:
            return nil
        case S_IFDIR:
            let inside = (path.hasSuffix("/") ? path : path + "/") + "imagecached.sock"
            return "\(path) is a folder, not a socket (the daemon's socket in it would be \(inside))"
        case S_IFREG:
            return "\(path) is a regular file, not a socket: give the path the daemon listens on (its log's start-up line names it)"
        default:
            return "\(path) is not a socket"
        }
    }
}
