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

    /// Returns the file's size once it is at least `bytes`; throws after `seconds`.
    public static func waitUntil(_ path: String, hasAtLeast bytes: Int, seconds: Double = 60) async throws -> Int {
        try await offCooperativePool {
            let fd = inotify_init1(Int32(IN_CLOEXEC))
            guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            defer { close(fd) }
            // The folder is watched, not the file: the file may not exist yet.
            let folder = (path as NSString).deletingLastPathComponent
            let mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO)
            guard inotify_add_watch(fd, folder, mask) >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            let deadline = Date().addingTimeInterval(seconds)
            var events = [UInt8](repeating: 0, count: 4096)
            while true {
                // Checked after the watch is in place, so no write can fall between.
                let current = size(path)
                if current >= bytes { return current }
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { throw FileGrowthTimeout(path: path, wanted: bytes, reached: current) }
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, Int32(min(left, 60) * 1000) + 1) > 0 {
                    _ = events.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                }
            }
        }
    }
}

/// A file that did not grow to the size a test waited for in time.
public struct FileGrowthTimeout: Error, CustomStringConvertible {
    public let path: String
    public let wanted: Int
    public let reached: Int
    public var description: String { "\(path) reached \(reached) bytes, not \(wanted), in time" }
}
