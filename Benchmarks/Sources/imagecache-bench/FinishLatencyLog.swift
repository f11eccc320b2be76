import Foundation
import ImageCacheKit
import Logging

/// The download benchmark's log handler: keeps the `afterLastByteMs` of every "download
/// finished" line (the daemon's own measure, from the instant the engine handed over the
/// complete body to the `download.finished` it sends, verification, fsync and move included),
/// and prints lines at `minimum` and above to standard error.
final class FinishLatencyLog: LogHandler, Sendable {
    private let latencies = LockedState<[Double]>([])
    private let minimum: Logger.Level

    init(minimum: Logger.Level) { self.minimum = minimum }

    var logLevel: Logger.Level {
        get { .info }
        set {}
    }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        if event.message.description == "download finished",
           let value = event.metadata?["afterLastByteMs"], let ms = Double("\(value)") {
            latencies.withLock { $0.append(ms) }
        }
        if event.level >= minimum {
            FileHandle.standardError.write(Data("\(event.level) \(event.message) \(event.metadata ?? [:])\n".utf8))
        }
    }

    /// Every latency recorded so far, in milliseconds, in arrival order.
    var values: [Double] { latencies.withLock { $0 } }
}
