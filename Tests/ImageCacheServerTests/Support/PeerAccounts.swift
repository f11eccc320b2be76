import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageCacheSupport
import TestSupport

/// Real users and groups of this system, made for one test (it runs as root) and removed after
/// it, and clients of the daemon running as them: what a shared daemon's rules are tested with.
///
/// A client is a child process under `setpriv --reuid --regid --init-groups` relaying between
/// the daemon's socket and one end of a socket pair whose other end this process reads as a
/// `RawClient`: the daemon sees that user's uid and groups (SO_PEERCRED, SO_PEERGROUPS) and the
/// test drives the connection like any other.
final class PeerAccounts: Sendable {
    /// A user made for the test.
    struct Account: Sendable {
        let name: String
        let uid: UInt32
    }

    /// The group every account has as its primary group: the daemon's `socket_group`.
    let group: String
    let groupID: UInt32
    /// The group `admin` is also in: the daemon's `admin_group`.
    let adminGroup: String
    let alice: Account
    let bob: Account
    /// A member of `adminGroup`.
    let admin: Account
    /// The user a system unit runs the daemon as (`User=imagecached`), in `group`.
    let service: Account
    private let children = LockedState<[ChildProcess]>([])

    /// Whether this process may make users and switch to them.
    static var canRun: Bool { geteuid() == 0 }

    private init(group: String, groupID: UInt32, adminGroup: String, alice: Account, bob: Account, admin: Account,
                 service: Account) {
        self.group = group
        self.groupID = groupID
        self.adminGroup = adminGroup
        self.alice = alice
        self.bob = bob
        self.admin = admin
        self.service = service
    }

    /// Makes the two groups and four users (no home folder), named uniquely for this run.
    static func make() async throws -> PeerAccounts {
        let tag = "icp" + String(UInt32.random(in: 0..<(1 << 20)), radix: 16)
        let group = tag + "g"
        let adminGroup = tag + "a"
        let names = ["alice", "bob", "adm", "svc"].map { tag + $0 }
        do {
            try await run("/usr/sbin/groupadd", [group])
            try await run("/usr/sbin/groupadd", [adminGroup])
            var made: [Account] = []
            for (name, extra) in zip(names, [[], [], ["-G", adminGroup], []]) {
                try await run("/usr/sbin/useradd", ["-M", "-N", "-g", group, "-s", "/usr/sbin/nologin"] + extra + [name])
                guard let entry = getpwnam(name) else { throw PeerAccountError.failed("no passwd entry for \(name)") }
                made.append(Account(name: name, uid: entry.pointee.pw_uid))
            }
            guard let entry = getgrnam(group) else { throw PeerAccountError.failed("no group entry for \(group)") }
            return PeerAccounts(group: group, groupID: entry.pointee.gr_gid, adminGroup: adminGroup,
                                alice: made[0], bob: made[1], admin: made[2], service: made[3])
        } catch {
            // Whatever was made before the failure goes too.
            for name in names { try? await run("/usr/sbin/userdel", [name]) }
            try? await run("/usr/sbin/groupdel", [adminGroup])
            try? await run("/usr/sbin/groupdel", [group])
            throw error
        }
    }

    /// A client of the daemon at `socketPath` running as `account`.
    func connect(_ account: Account, to socketPath: String) async throws -> DownloadClient {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw PeerAccountError.failed("socketpair: \(String(cString: strerror(errno)))")
        }
        let child: ChildProcess
        do {
            child = try ChildProcess("/usr/bin/setpriv", arguments: [
                "--reuid=\(account.name)", "--regid=\(group)", "--init-groups",
                "/usr/bin/python3", "-c", Self.relay, socketPath,
            ], environment: ["PATH=/usr/bin:/bin", "LANG=C.UTF-8"],
               stdin: .descriptor(pair[1]), stdout: .descriptor(pair[1]), stderr: .discard)
        } catch {
            close(pair[0])
            close(pair[1])
            throw error
        }
        close(pair[1])
        children.withLock { $0.append(child) }
        return DownloadClient(try await RawClient.adopt(descriptor: pair[0]))
    }

    /// Ends the relays still running and removes the users and groups.
    func remove() async {
        for child in children.withLock({ $0 }) {
            child.signal(SIGTERM)
            if await child.exit(within: 10) == nil {
                child.signal(SIGKILL)
                _ = await child.exit(within: 10)
            }
        }
        for account in [alice, bob, admin, service] { try? await Self.run("/usr/sbin/userdel", [account.name]) }
        try? await Self.run("/usr/sbin/groupdel", [adminGroup])
        try? await Self.run("/usr/sbin/groupdel", [group])
    }

    /// Makes `path` owned by `account` (and the accounts' group), with `mode`.
    func give(_ path: String, to account: Account, mode: mode_t) throws {
        guard lchown(path, account.uid, groupID) == 0 else {
            throw PeerAccountError.failed("chown \(path): \(String(cString: strerror(errno)))")
        }
        if mode != 0 { guard chmod(path, mode) == 0 else { throw PeerAccountError.failed("chmod \(path)") } }
    }

    private static func run(_ tool: String, _ arguments: [String]) async throws {
        let outcome = try await runTool(tool, arguments, mergeOutput: true, seconds: 60)
        guard outcome.status == 0 else {
            throw PeerAccountError.failed("\(tool) \(arguments.joined(separator: " ")): \(outcome.stdout)")
        }
    }

    /// The client process: connects to the socket named by its argument, copies its stdin to
    /// the socket (shutting the socket's writing side at end of input) and the socket to its
    /// stdout, and exits when the daemon closes the connection.
    private static let relay = """
        import os, socket, sys, threading
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sys.argv[1])
        def up():
            while True:
                data = os.read(0, 65536)
                if not data:
                    s.shutdown(socket.SHUT_WR)
                    return
                s.sendall(data)
        threading.Thread(target=up, daemon=True).start()
        while True:
            data = s.recv(65536)
            if not data:
                break
            view = memoryview(data)
            while view:
                view = view[os.write(1, view):]
        """
}

enum PeerAccountError: Error {
    case failed(String)
}
