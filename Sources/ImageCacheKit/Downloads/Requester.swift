#if canImport(Glibc)
import Glibc
#endif

/// Who is asking, as the kernel told the daemon (SO_PEERCRED and SO_PEERGROUPS): what a shared
/// daemon decides by whose jobs a peer may see, where it may save and whether it may empty the
/// cache (docs/protocol.md, "Shared daemons").
///
/// Why not trust anything the client says: every member of `socket_group` can connect, so only
/// the kernel's account of the peer process tells one user from another.
package enum Requester: Sendable, Hashable {
    /// A peer whose credentials were read.
    case peer(PeerIdentity)
    /// A peer whose credentials could not be read: owns nothing, sees no job, may not save or
    /// empty the cache.
    case stranger

    /// The daemon's own process: every caller inside the daemon, and every peer of a user
    /// daemon (all of one uid), which keeps today's behaviour whole.
    package static var daemon: Requester { .peer(.daemonProcess) }

    /// The uid, nil for a stranger.
    package var uid: UInt32? {
        if case .peer(let identity) = self { return identity.uid }
        return nil
    }

    /// The identity, nil for a stranger.
    package var identity: PeerIdentity? {
        if case .peer(let identity) = self { return identity }
        return nil
    }

    /// Root or the daemon's own uid: sees every job, saves where the daemon itself may (the
    /// rules of a single-user daemon), empties the cache.
    package var isPrivileged: Bool {
        guard let uid else { return false }
        return uid == 0 || uid == PeerIdentity.daemonUID
    }

    /// Whether this requester may see (list, status, watch, cancel) a job owned by `owner`; a
    /// job whose row names no owner is the daemon's uid's.
    package func maySee(jobOwnedBy owner: UInt32?) -> Bool {
        guard let uid else { return false }
        return isPrivileged || uid == (owner ?? PeerIdentity.daemonUID)
    }

    /// Whether this requester may empty the whole cache: privileged, or a member of the
    /// configured `admin_group` (its gid, nil when none is configured).
    package func mayClearCache(adminGroup: UInt32?) -> Bool {
        if isPrivileged { return true }
        guard let identity, let adminGroup else { return false }
        return identity.isMember(of: adminGroup)
    }
}

/// A peer's uid, primary gid and supplementary groups.
package struct PeerIdentity: Sendable, Hashable {
    /// The effective uid of the peer process when it connected.
    package var uid: UInt32
    /// Its effective gid.
    package var gid: UInt32
    /// Its supplementary groups (empty when they could not be read: fewer rights, never more).
    package var groups: [UInt32]

    /// An identity as the kernel reported it.
    package init(uid: UInt32, gid: UInt32, groups: [UInt32]) {
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    /// The daemon's own effective uid (the uid of `User=` under the system unit).
    package static let daemonUID: UInt32 = geteuid()

    /// The daemon process's own identity.
    package static let daemonProcess: PeerIdentity = {
        var groups = [gid_t](repeating: 0, count: 256)
        let count = getgroups(Int32(groups.count), &groups)
        return PeerIdentity(uid: geteuid(), gid: getegid(), groups: count > 0 ? Array(groups.prefix(Int(count))) : [])
    }()

    /// Whether the peer is in `group` (as its primary or a supplementary group).
    package func isMember(of group: UInt32) -> Bool {
        gid == group || groups.contains(group)
    }

    /// What `access(2)` would answer for this peer about a file with `info`'s owner and mode:
    /// the owner's bits when it owns it, else the group's when it is a member, else the others'
    /// (as the kernel does, one class only). `want` is a mask of `R_OK`, `W_OK`, `X_OK`. Root
    /// may anything. Access control lists are not read: a folder opened to a peer only by an
    /// ACL is refused, the safe side.
    package func may(_ want: Int32, _ info: stat) -> Bool {
        if uid == 0 { return true }
        let bits = UInt32(want) & 0o7
        let mode = UInt32(info.st_mode)
        let granted: UInt32
        if info.st_uid == uid {
            granted = (mode >> 6) & 0o7
        } else if isMember(of: info.st_gid) {
            granted = (mode >> 3) & 0o7
        } else {
            granted = mode & 0o7
        }
        return granted & bits == bits
    }
}
