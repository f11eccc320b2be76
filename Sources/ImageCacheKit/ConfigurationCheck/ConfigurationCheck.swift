import ImageCacheConfig
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What start-up needs of the places a configuration names, checked before anything is opened:
/// `cache_dir`, `state_dir` and every download root usable (a writable folder, or creatable under a
/// writable one; for root, not on a pseudo file system such as /proc), `ca_bundle` a readable
/// file, the socket's folder usable and `socket_group` a group unless systemd passes the
/// socket, `admin_group` a group, and `metrics_listen` bindable (ConfigurationCheck+Names).
///
/// The same checks run for `imagecached --check-config` (which the units run as `ExecStartPre=`
/// and before `ExecReload=`, as `nginx -t` is run) and at every start, so a configuration that
/// the check accepts does not then fail start-up on a folder, and a start that fails on one
/// says which key to fix and exits 78 (EX_CONFIG): systemd does not restart it in a loop.
/// The check reads the file system as it is now, as the user the process runs as; it creates
/// nothing.
package enum ConfigurationCheck {
    /// Every problem found, in the order of the keys above; empty when start-up can proceed.
    ///
    /// - Parameters:
    ///   - configuration: the configuration with the command line's overrides applied.
    ///   - socketActivated: true when systemd passes the listening socket (its folder is then
    ///     systemd's business, not the daemon's).
    ///   - environment: the process's; `$MAINPID` marks a check run by `ExecReload=` while the
    ///     daemon runs (it holds its own metrics address then), as does a held lock on
    ///     `cache_dir` for a check run by hand.
    package static func problems(of configuration: CacheConfiguration, socketActivated: Bool,
                                 environment: [String: String] = [:]) -> [ConfigurationError] {
        let file = configuration.sourcePath ?? "defaults"
        var found: [ConfigurationError] = []
        // The checks of names and addresses (ConfigurationCheck+Names) point at the key's
        // line too; the places' checks name the key alone, as they always have.
        func report(_ section: String, _ key: String, _ message: String, withLine: Bool = false) {
            let number = withLine ? ConfigLexer.line(of: key, section: section, in: configuration.sourcePath) : nil
            found.append(ConfigurationError(path: file, line: number, section: section, key: key,
                                            message: "\(key) in [\(section)]: \(message)"))
        }
        // Root can write anywhere, so a root daemon's folders are also checked against the
        // kernel's pseudo file systems; another user cannot create files there anyway.
        let asRoot = getuid() == 0
        func checkPlace(_ section: String, _ key: String, _ path: String) {
            if asRoot, let problem = pseudoFileSystemProblem(path) {
                report(section, key, problem, withLine: true)
            } else if let problem = folderProblem(path) {
                report(section, key, problem)
            }
        }
        checkPlace("cache", "cache_dir", configuration.resolvedCacheDirectory)
        checkPlace("daemon", "state_dir", configuration.resolvedStateDirectory)
        for root in configuration.resolvedDownloadRoots { checkPlace("downloads", "download_dir", root) }
        if let bundle = configuration.network.caBundle, let problem = readableFileProblem(bundle) {
            report("network", "ca_bundle", problem)
        }
        if !socketActivated {
            let socket = configuration.resolvedSocketPath
            if let problem = folderProblem(parentFolder(of: socket)) {
                var message = "the socket \(socket) cannot be created: \(problem)"
                if configuration.daemon.socket == nil, !configuration.environmentDefaults.hasRuntimeDirectory, getuid() != 0 {
                    message += " (XDG_RUNTIME_DIR is not set, so the system socket path was chosen: log in through a session"
                        + " that sets it, export XDG_RUNTIME_DIR=/run/user/\(getuid()), or give --socket PATH or `socket =` in [daemon])"
                }
                report("daemon", "socket", message)
            }
            if let group = configuration.daemon.socketGroup, let problem = groupProblem(group) {
                report("daemon", "socket_group", problem, withLine: true)
            }
        }
        if let group = configuration.daemon.adminGroup, let problem = groupProblem(group) {
            report("daemon", "admin_group", problem, withLine: true)
        }
        // The daemon of this very configuration may be running (a reload's check, or an
        // operator checking by hand): it holds its own metrics address, which is then no fault.
        // systemd says so with $MAINPID; by hand, the cache folder's lock tells.
        let runningDaemon = (environment["MAINPID"].map { !$0.isEmpty } ?? false)
            || FolderLock.isHeld(lockFile: configuration.resolvedCacheDirectory + "/lock")
        if let address = configuration.daemon.metricsListen,
           let problem = metricsProblem(address, runningDaemon: runningDaemon) {
            report("daemon", "metrics_listen", problem, withLine: true)
        }
        return found
    }

    /// Why `path` cannot serve as a folder the daemon writes in, or nil when it can: it exists
    /// as a folder this user may create files in, or it does not exist yet and its nearest
    /// existing ancestor is such a folder (the daemon creates the rest).
    static func folderProblem(_ path: String) -> String? {
        var status = stat()
        if stat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else { return "\(path) exists and is not a folder" }
            guard access(path, W_OK | X_OK) == 0 else { return "\(path) is not writable by this user (\(reason(errno)))" }
            return nil
        }
        // ENOTDIR: a file stands where a folder of the path should be; the walk up names it.
        guard errno == ENOENT || errno == ENOTDIR else { return "\(path) cannot be examined (\(reason(errno)))" }
        var ancestor = parentFolder(of: path)
        while true {
            if stat(ancestor, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFDIR else {
                    return "\(path) cannot be created: \(ancestor) is not a folder"
                }
                guard access(ancestor, W_OK | X_OK) == 0 else {
                    return "\(path) does not exist and cannot be created: \(ancestor) is not writable by this user (\(reason(errno)))"
                }
                return nil
            }
            guard errno == ENOENT || errno == ENOTDIR, ancestor != "/" else { return "\(path) cannot be created (\(reason(errno)))" }
            ancestor = parentFolder(of: ancestor)
        }
    }

    /// Why `path` is not a regular file this user can read, or nil.
    static func readableFileProblem(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return "\(path) cannot be read (\(reason(errno)))" }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        return nil
    }

    /// The folder holding `path` ("/" for a top-level name).
    static func parentFolder(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let parent = trimmed[..<slash]
        return parent.isEmpty ? "/" : String(parent)
    }

    private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
