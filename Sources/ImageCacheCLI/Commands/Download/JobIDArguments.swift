import ArgumentParser

/// The job ids `download status`, `watch` and `cancel` act on: one argument, its completion
/// and the rule that at least one is named, written once for the three.
public struct JobIDArguments: ParsableArguments {
    @Argument(help: ArgumentHelp("Job ids, as `download --detach` or `download list` printed them.", valueName: "job"),
              completion: Completions.jobIDs)
    public var jobs: [String] = []

    public init() {}

    public func validate() throws {
        if jobs.isEmpty { throw ValidationError("Name at least one job id (see `imagecache download list`).") }
    }
}
