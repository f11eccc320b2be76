import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The end of stdin as the parent's lifeline: a parent that holds the write end of a pipe on
/// its child's stdin, and never writes to it, tells the child it is gone when the kernel closes
/// that end, however the parent ended (SIGKILL, a closed terminal's SIGHUP, a crash), which no
/// signal the parent could send would cover. Linux's PR_SET_PDEATHSIG would follow the spawning
/// *thread*, which a thread pool may end at any time. The demo starts its simulator and its
/// daemon so (`--watch-stdin`), and they stop as on SIGTERM.
package enum StdinLifeline {
    /// Whether stdin is a pipe, the only lifeline: a terminal would have its input consumed
    /// (and a background job stopped by SIGTTIN), a file or /dev/null ends at once, and a
    /// closed descriptor 0 could be the next file or socket the process opens.
    package static var stdinIsPipe: Bool {
        var info = stat()
        return fstat(0, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO
    }

    /// One element, then the end, once stdin reaches its end (or cannot be read; callers check
    /// `stdinIsPipe` first). A thread of
    /// its own, never one of the cooperative pool, blocks in `read` until then (for the life of
    /// the process, when it never comes); bytes read before are dropped.
    package static func ended() -> AsyncStream<Void> {
        let (ended, feed) = AsyncStream.makeStream(of: Void.self)
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                    // A pipe left non-blocking: wait for it instead of taking that as its end.
                    var watched = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
                    _ = poll(&watched, 1, -1)
                    continue
                }
                if count <= 0 { break }
            }
            feed.yield()
            feed.finish()
        }.start()
        return ended
    }
}
