#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A group of this system by the name (or number) a configuration gives: `socket_group` and
/// `admin_group`. One lookup, so that `--check-config`, the socket's owner at start and the
/// cache's rights agree on what names a group.
package enum SystemGroup {
    /// The gid of `name`, or nil when it names no group. A name of digits only is taken as the
    /// number itself, as chgrp(1) does.
    package static func id(named name: String) -> UInt32? {
        if let number = UInt32(name) { return number }
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        // Room for a group with many members; getgrnam_r says ERANGE (nil here) beyond it.
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let code = getgrnam_r(name, &entry, &buffer, buffer.count, &result)
        guard code == 0, let result else { return nil }
        return result.pointee.gr_gid
    }
}
