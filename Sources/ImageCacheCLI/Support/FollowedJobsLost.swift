/// The daemon's connection ended while a command followed download jobs. The jobs are the
/// daemon's, not the connection's: they go on (or resume at its next start), so the message
/// names the socket that was used, the jobs, and the command that looks at them later.
public struct FollowedJobsLost: Error, Sendable, CustomStringConvertible {
    /// The socket the command was connected to.
    public var socketPath: String
    /// The ids of the jobs that had not ended.
    public var jobs: [String]
    /// `imagecache [--socket S] download status JOB…`, ready to paste.
    public var statusCommand: String

    public init(socketPath: String, jobs: [String], statusCommand: String) {
        self.socketPath = socketPath
        self.jobs = jobs
        self.statusCommand = statusCommand
    }

    public var description: String {
        let what = jobs.count == 1 ? "download job" : "download jobs"
        return "the connection to imagecached at \(socketPath) closed while following \(what) \(jobs.joined(separator: ", ")).\n"
            + "The jobs are the daemon's and go on without this command: look at them later with `\(statusCommand)`."
    }
}
