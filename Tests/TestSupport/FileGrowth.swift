import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Waits for a file to reach a size, woken by the kernel (inotify) as it is written rather
/// than by looking every few milliseconds: a download's `.part` before a test kills the daemon.
public enum FileGrowth {
    /// The size of the file at `path`, 0 when there is none yet.
    public static func size(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// Returns the file's size once it is at least `bytes`; throws after `seconds`, or with
    /// `CancellationError` as soon as the calling task is cancelled (a suite's time limit).
    public static func waitUntil(_ path: String, hasAtLeast bytes: Int, seconds: Double = 60) async throws -> Int {
        try await waitUntil(path, seconds: seconds, wanted: "\(bytes) bytes") { size($0) >= bytes ? size($0) : nil }
    }

    /// Returns once the file at `path` holds `needle` (a file rewritten by rename, such as the
    /// download job table, is read whole on each change in its folder); throws like `waitUntil`.
    public static func waitUntil(_ path: String, contains needle: String, seconds: Double = 60) async throws {
        let bytes = Array(needle.utf8)
        _ = try await waitUntil(path, seconds: seconds, wanted: "the text \(needle)") { path -> Int? in
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            return [UInt8](data).firstRange(of: bytes) != nil ? data.count : nil
        }
    }

    /// The one wait both public waits use: `check` is asked after the watch is in place and on
    /// every change in the file's folder, until it returns a value, the deadline or a cancel.
    private static func waitUntil(_ path: String, seconds: Double, wanted: String,
                                  check: @escaping @Sendable (String) -> Int?) async throws -> Int {
        let wakeUp = WakeUp()
        return try await withTaskCancellationHandler {
            try await offCooperativePool {
                defer { wakeUp.close() }
                let fd = inotify_init1(Int32(IN_CLOEXEC))
                guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
                defer { Glibc.close(fd) }
                // The folder is watched, not the file: the file may not exist yet.
                let folder = (path as NSString).deletingLastPathComponent
                let mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO)
                guard inotify_add_watch(fd, folder, mask) >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
                let deadline = Date().addingTimeInterval(seconds)
                var events = [UInt8](repeating: 0, count: 4096)
                while true {
                    // Checked after the watch is in place, so no write can fall between.
                    if let reached = check(path) { return reached }
                    if wakeUp.cancelled { throw CancellationError() }
                    let left = deadline.timeIntervalSinceNow
                    guard left > 0 else { throw FileGrowthTimeout(path: path, wanted: wanted, reached: size(path)) }
                    var pollers = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                                   pollfd(fd: wakeUp.readEnd, events: Int16(POLLIN), revents: 0)]
                    if poll(&pollers, 2, Int32(min(left, 60) * 1000) + 1) > 0, pollers[0].revents != 0 {
                        _ = events.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    }
                }
            }
        } onCancel: {
            wakeUp.cancel()
        }
    }

    /// A pipe the cancellation handler writes to, so the waiting thread's `poll` returns; its
    /// descriptors are closed under a lock, so a late cancel never writes to a reused number.
    private final class WakeUp: @unchecked Sendable {
        private let lock = NSLock()
        private var fds: [Int32]? = nil
        private var wasCancelled = false

        init() {
            var ends: [Int32] = [-1, -1]
            if pipe(&ends) == 0 {
                // Close-on-exec, so a child another test spawns never holds this pipe.
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                fds = ends
            }
        }

        /// The end `poll` watches (-1, ignored by `poll`, when the pipe could not be made).
        var readEnd: Int32 { lock.withLock { fds?[0] ?? -1 } }
        var cancelled: Bool { lock.withLock { wasCancelled } }

        func cancel() {
            lock.withLock {
                wasCancelled = true
                if let fds { var byte: UInt8 = 1; _ = write(fds[1], &byte, 1) }
            }
        }

        func close() {
            lock.withLock {
                fds?.forEach { _ = Glibc.close($0) }
                fds = nil
            }
        }
    }
}

/// A file that did not grow to the size a test waited for in time.
public struct FileGrowthTimeout: Error, CustomStringConvertible {
    public let path: String
    /// What the wait was for: a size ("30000 bytes") or a text.
    public let wanted: String
    /// The file's size when the wait gave up.
    public let reached: Int
    public var description: String { "\(path) did not reach \(wanted) in time (it has \(reached) bytes)" }
}
