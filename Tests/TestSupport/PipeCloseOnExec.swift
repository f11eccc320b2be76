import Foundation

extension Pipe {
    /// The pipe with both of this process's ends marked close-on-exec.
    ///
    /// Tests spawn processes concurrently; without this, a child spawned by one test (a daemon,
    /// nginx) inherits the write end of another test's pipe and keeps it open, so that test's
    /// read-to-end never sees the end. The child a pipe is meant for still gets it: the spawn
    /// `dup2`s it onto the child's stdin/stdout/stderr, and `dup2` clears the flag.
    public func closingOnExec() -> Pipe {
        _ = fcntl(fileHandleForReading.fileDescriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        return self
    }
}
