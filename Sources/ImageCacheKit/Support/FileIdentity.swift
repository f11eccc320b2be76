import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Which file a name or descriptor leads to: its device, its inode number and a generation
/// marker, its birth time. Whatever the daemon removes, empties or reuses by name checks it
/// first: a download's folder, placeholder, `.part` and saved file, a spill file, the socket.
///
/// Why not the inode number alone: ext4, tmpfs and most other file systems hand a freed inode
/// number to the next file created, so once a job's own file is deleted (by the user, say) the
/// next file made at that name may carry the very same number. A removal checked by number
/// alone would then delete a file that is not the daemon's. The birth time (`statx(2)`,
/// `STATX_BTIME`) tells the two apart: the new file was born later. It is as fine as the file
/// system's clock: where that is a scheduler tick (kernels before multigrain timestamps), a
/// file deleted and another made at its number within the same millisecond or so look alike.
///
/// Where the file system reports no birth time (NFS, ext4 with 128-byte inodes, a kernel
/// without `statx`), the change time stands in: it is set when a file is created too, so a
/// new file at a reused number still differs. It also moves when the file itself changes
/// (a write, a rename, a `chmod`), so such an identity confirms only a file untouched since it
/// was taken; a file that cannot be confirmed is left where it is, never removed.
///
/// A record written before identities carried a device and a generation (only `inode`) keeps
/// the number and nothing else: it never confirms anything (`confirms`), so such a job removes
/// no file by it.
package struct FileIdentity: Sendable, Codable, Hashable {
    /// `st_dev` of the file system holding it; nil in a record that predates it.
    package var device: UInt64?
    /// The inode number.
    package var inode: UInt64
    /// When the file was created, in nanoseconds since 1970, where the file system records it.
    package var born: Int64?
    /// The change time in nanoseconds since 1970, kept only where `born` is unknown.
    package var changed: Int64?

    /// What one look at a file found: its identity and the facts a removal checks.
    package struct Look: Sendable {
        /// See `FileIdentity`.
        package var identity: FileIdentity
        /// The `S_IFMT` bits.
        package var type: mode_t
        /// Its size in bytes.
        package var size: Int64
        /// Its hard links.
        package var links: UInt32

        /// Whether it is a regular file (not a symlink, folder, device or socket).
        package var isRegular: Bool { type == S_IFREG }
    }

    /// An identity from its parts (a record, a test).
    package init(device: UInt64?, inode: UInt64, born: Int64?, changed: Int64?) {
        self.device = device
        self.inode = inode
        self.born = born
        self.changed = changed
    }

    /// What `name` in the open folder `folder` is now (a symlink itself, never its target);
    /// nil when nothing is there or it cannot be read.
    package static func look(at name: String, in folder: Int32) -> Look? {
        guard !name.isEmpty else { return nil }
        return look(folder, name)
    }

    /// What the absolute `path` names now (a symlink itself, never its target); nil when
    /// nothing is there or it cannot be read.
    package static func look(atPath path: String) -> Look? {
        look(at: path, in: AT_FDCWD)
    }

    /// Whether the absolute `path` still names this very file (`confirms`): what a removal by
    /// name checks first, so it never removes a file made since at that name.
    package func isStill(atPath path: String) -> Bool {
        guard let current = Self.look(atPath: path) else { return false }
        return confirms(current.identity)
    }

    /// What the open descriptor `fd` is.
    package static func look(fd: Int32) -> Look? {
        look(fd, "")
    }

    private static func look(_ fd: Int32, _ name: String) -> Look? {
        var found = ic_file_look()
        guard ic_look_at(fd, name, &found) == 0 else { return nil }
        // A birth time of 0 is a file system that reports the field but kept nothing in it
        // for this inode (one made before it recorded births): no generation at all.
        let born = found.has_birth != 0 ? nanoseconds(found.birth_seconds, found.birth_nanoseconds) : nil
        let known = born.flatMap { $0 == 0 ? nil : $0 }
        let identity = FileIdentity(device: found.device, inode: found.inode, born: known,
                                    changed: known == nil ? nanoseconds(found.change_seconds, found.change_nanoseconds) : nil)
        return Look(identity: identity, type: mode_t(found.mode) & S_IFMT, size: found.size, links: found.links)
    }

    /// `seconds` and `nanoseconds` as one count of nanoseconds; nil past what 64 bits hold
    /// (after the year 2262), which leaves the file unconfirmable rather than misread.
    private static func nanoseconds(_ seconds: Int64, _ nanoseconds: UInt32) -> Int64? {
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return nil }
        let (sum, carry) = scaled.addingReportingOverflow(Int64(nanoseconds))
        return carry ? nil : sum
    }

    /// Whether `current` (what stands at the name now) is provably this file: same device,
    /// same inode number, and the same birth time (or, where the file system keeps none, the
    /// same change time). An identity with no device or no generation (an old record)
    /// confirms nothing.
    package func confirms(_ current: FileIdentity) -> Bool {
        guard let device, device == current.device, inode == current.inode else { return false }
        if let born { return current.born == born }
        if let changed { return current.born == nil && current.changed == changed }
        return false
    }

    /// Whether `current` is this same folder: device and inode number, and the birth time
    /// where both have one. A folder's change time is not compared: it moves with every entry
    /// made or removed in it, which the jobs writing there do all the time.
    package func isSameFolder(_ current: FileIdentity) -> Bool {
        guard device == current.device, inode == current.inode else { return false }
        if let born, let now = current.born { return born == now }
        return true
    }
}
