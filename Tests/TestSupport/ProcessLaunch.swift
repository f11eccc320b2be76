import Foundation

/// One lock for every Foundation `Process` a test process starts.
private let launchLock = NSLock()

extension Process {
    /// `run()`, never at the same moment as another test's.
    ///
    /// Why: `Process` learns that a child exited when a socket pair it makes in `run()` reads
    /// end-of-file, and it closes in the child only the descriptors it saw open a moment
    /// before spawning. A socket pair another thread's `run()` makes in that moment leaks into
    /// this child; when this child lives long (a daemon, memcached), the other child's exit is
    /// never noticed and its test waits forever (CI hung on three such tests at once). Under
    /// this lock no pair is made while another child is being spawned. (`ChildSpawn`, which
    /// closes every descriptor from 3 up, needs no lock.)
    public func runAlone() throws {
        try launchLock.withLock { try run() }
    }
}
