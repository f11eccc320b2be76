import ImageCacheConfig
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// The checks of `ConfigurationCheck` on what a configuration names rather than where it
/// writes: a group that must exist, an address that must be bindable, a folder that must not
/// be on a pseudo file system. Each would otherwise pass `--check-config` and then stop the
/// start (exit 78) or, worse, let a root daemon write into the kernel's interfaces.
extension ConfigurationCheck {
    /// Why `socket_group` or `admin_group` names no group, or nil: a name (or a number) that
    /// is not a group of this system.
    static func groupProblem(_ name: String) -> String? {
        guard SystemGroup.id(named: name) == nil else { return nil }
        return "\"\(name)\" is not a group on this system (see `getent group`; create it with `groupadd \(name)`)"
    }

    /// Why the daemon could not listen on `address`, or nil. A TCP address is bound for a
    /// moment (with `SO_REUSEADDR`, as the endpoint binds it) and released at once: an address
    /// in use, one that is not this host's, or a port this user may not bind are found now,
    /// not at start. A Unix socket path is not bound (the check creates nothing): its folder
    /// must be usable, and what sits at the path must be a socket no one listens on.
    ///
    /// - Parameter runningDaemon: true under `ExecReload=` (systemd sets `$MAINPID`): the
    ///   running daemon holds the address itself, and a reload does not rebind it.
    static func metricsProblem(_ address: MetricsListenAddress, runningDaemon: Bool) -> String? {
        switch address {
        case .tcp(let host, let port):
            return tcpBindProblem(host: host, port: port, runningDaemon: runningDaemon)
        case .unix(let path):
            var status = stat()
            if lstat(path, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFSOCK else { return "\(path) exists and is not a socket" }
                if !runningDaemon, unixSocketAnswers(path) { return "\(path) is in use: something listens on it" }
                return nil
            }
            return folderProblem(parentFolder(of: path)).map { "the socket \(path) cannot be created: \($0)" }
        }
    }

    private static func tcpBindProblem(host: String, port: Int, runningDaemon: Bool) -> String? {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &found)
        guard code == 0, let first = found else {
            return "\(host) cannot be resolved (\(String(cString: gai_strerror(code))))"
        }
        defer { freeaddrinfo(found) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "no socket for \(host) (\(errorText(errno)))" }
        defer { close(fd) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let failure = errno
            if failure == EADDRINUSE, runningDaemon { return nil }
            let shown = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            var message = "\(shown) cannot be bound (\(errorText(failure)))"
            if failure == EADDRNOTAVAIL { message += ": it is not an address of this host" }
            if failure == EADDRINUSE { message += ": another process listens there (`ss -ltnp` names it)" }
            return message
        }
        return nil
    }

    /// The text of an errno value.
    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// Whether a process accepts connections on the Unix socket at `path`.
    private static func unixSocketAnswers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// The pseudo file systems a daemon must never write into: the kernel's interfaces,
    /// where root may write and a cache would change system settings or fill memory.
    static let pseudoFileSystems: Set<String> = [
        "proc", "sysfs", "devtmpfs", "devpts", "debugfs", "tracefs", "securityfs", "cgroup", "cgroup2", "bpf",
        "efivarfs", "configfs", "pstore", "mqueue", "hugetlbfs", "fusectl", "binfmt_misc", "autofs",
    ]

    /// Why `path` lies on a pseudo file system (`/proc`, `/sys`, `/dev`…), or nil. The mount
    /// holding the nearest existing ancestor (the folder may be created later), symlinks
    /// resolved, is looked up in `/proc/self/mountinfo`, which names each mount's type
    /// (unlike `statfs`'s magic numbers, devtmpfs apart from tmpfs).
    static func pseudoFileSystemProblem(_ path: String, mountInfo: String? = nil) -> String? {
        var probe = path
        var resolved = realpath(probe, nil)
        while resolved == nil {
            guard errno == ENOENT || errno == ENOTDIR, probe != "/" else { return nil }
            probe = parentFolder(of: probe)
            resolved = realpath(probe, nil)
        }
        guard let resolved else { return nil }
        let real = String(cString: resolved)
        free(resolved)
        guard let table = mountInfo ?? (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) else { return nil }
        var best: (point: String, type: String)?
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 6, let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count else { continue }
            let point = unescapeMountPoint(String(fields[4]))
            let inside = point == "/" || real == point || real.hasPrefix(point + "/")
            // A later mount over the same point hides the earlier: ties go to the later line.
            if inside, point.count >= (best?.point.count ?? 0) { best = (point, String(fields[dash + 1])) }
        }
        guard let mount = best, pseudoFileSystems.contains(mount.type) else { return nil }
        return "\(path) is on \(mount.point) (\(mount.type)), a pseudo file system of the kernel's, not storage: choose a folder on a disk"
    }

    /// A mount point as `/proc/self/mountinfo` writes it, with `\040` (space), `\011`, `\012`
    /// and `\134` back as the characters.
    private static func unescapeMountPoint(_ text: String) -> String {
        text.replacingOccurrences(of: "\\040", with: " ").replacingOccurrences(of: "\\011", with: "\t")
            .replacingOccurrences(of: "\\012", with: "\n").replacingOccurrences(of: "\\134", with: "\\")
    }

}
