import Foundation

/// A benchmark step that did not finish in its time: reported rather than waited for forever.
struct DeadlineExceeded: Error, CustomStringConvertible {
    let what: String
    let seconds: Double
    var description: String { "\(what) did not finish within \(Int(seconds)) s" }
}

/// Runs `operation`, throwing `DeadlineExceeded` (and cancelling it) after `seconds`.
func withDeadline<T: Sendable>(_ seconds: Double, _ what: String,
                               _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw DeadlineExceeded(what: what, seconds: seconds)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw DeadlineExceeded(what: what, seconds: seconds) }
        return first
    }
}
