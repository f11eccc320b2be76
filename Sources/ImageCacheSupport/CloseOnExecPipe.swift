import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A pipe whose two ends are close-on-exec in this process, so no child another thread starts
/// meanwhile inherits them (the child named them gets its own copies, made by `dup2`): a child
/// holding a stray write end would keep its reader from ever seeing the end. Here, beside
/// `ChildSpawn`, because both the tests and the daemon-process helper read children's output.
package struct CloseOnExecPipe: Sendable {
    /// The read end.
    package let read: Int32
    /// The write end.
    package let write: Int32

    /// Opens the pipe; throws the C library's reason when no descriptor is left.
    package init() throws {
        // pipe2 is not in Swift's Glibc module; the moment between pipe and fcntl is harmless,
        // as every child is started by ChildSpawn, which closes all descriptors from 3 up.
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EMFILE) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        read = fds[0]
        write = fds[1]
    }
}
