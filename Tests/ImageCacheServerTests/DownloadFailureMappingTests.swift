import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
@testable import ImageCacheServer
import Testing

/// A download job keeps the engine's own failure (`DownloadFailure`), and the server maps it to
/// the wire: the answer must be the very object the error itself maps to, for every error a
/// download can end with, texts redacted and `retryAfter` rounded as before.
@Suite("Downloads: a job's recorded failure maps to the wire as its error did", .timeLimit(.minutes(1)))
struct DownloadFailureMappingTests {
    /// An error no engine module throws: a bug, sent as `internal` without its text.
    struct Unknown: Error {}

    static let url = "https://img.example/a.jpg?api_key=SECRET123"

    /// The errors a download job ends with: the transfer's, the verifier's, the folder's, a
    /// cancellation (the user's, the daemon's stop, a task's), and a bug.
    static let errors: [any Error] = [
        TransferError(.status(503, excerpt: "busy, see https://x.example/?api_key=SECRET123", retryAfter: 2.4), url: url),
        TransferError(.status(429, excerpt: nil, retryAfter: 0.2), url: url),
        TransferError(.status(404, excerpt: "no such photo", retryAfter: nil), url: url),
        TransferError(.aborted(.stalled(seconds: 1.0)), url: url),
        TransferError(.aborted(.tooLarge(limit: 100)), url: url),
        TransferError(.aborted(.diskFailure("cannot create a body file", errno: ENOSPC)), url: url),
        TransferError(.cannotConnect("Connection refused"), url: url),
        TransferError(.hostNotAllowed("evil.example"), url: url),
        Cancellation(.download),
        Cancellation.shutdown,
        Cancellation(.verification(abandoned: true)),
        CancellationError(),
        DownloadError.folderRefused(stage: .save, cause: .folderReplaced("/tmp/x")),
        DownloadError.directoryNotAbsolute,
        DownloadError.storage("cannot write /tmp/x/a.jpg.part", errno: ENOSPC),
        DownloadError.internalFault("the partial download ends early"),
        ImagingError.decodeFailed("JPEG: truncated (no end-of-image marker)", format: .jpeg),
        ImagingError.tooLarge(width: 30000, height: 30000, maxPixels: 100_000_000),
        StorageError("cannot read /tmp/x", errno: EIO),
        Unknown(),
    ]

    @Test("every error a download ends with: the same wire object as the error itself, redacted")
    func sameAnswer() throws {
        for error in Self.errors {
            let recorded = DownloadFailure(error)
            #expect(WireErrorMapping.rpcError(for: recorded) == WireErrorMapping.rpcError(for: error), "for \(error)")
            #expect(recorded.kind == engineKind(of: error), "the engine's kind is kept for \(error)")
            #expect(!recorded.message.contains("SECRET123") && !(recorded.body ?? "").contains("SECRET123"),
                    "no secret reaches the table for \(error)")
        }
    }

    @Test("a failure goes through the table and back unchanged, in the wire error's JSON shape")
    func tableShape() throws {
        for error in Self.errors {
            let recorded = DownloadFailure(error)
            let data = try JSONEncoder().encode(recorded)
            #expect(try JSONDecoder().decode(DownloadFailure.self, from: data) == recorded)
            // The shape an older daemon wrote and reads: the wire error's.
            let asWire = try JSONDecoder().decode(RPCError.self, from: data)
            #expect(asWire == WireErrorMapping.rpcError(for: error), "for \(error)")
            let wireData = try JSONEncoder().encode(WireErrorMapping.rpcError(for: error))
            #expect(try JSONDecoder().decode(DownloadFailure.self, from: wireData) == recorded, "for \(error)")
        }
    }

    @Test("the daemon's stop is told apart from a cancel: only it leaves a job to resume")
    func shutdown() {
        #expect(DownloadFailure(Cancellation.shutdown).isShutdown)
        #expect(!DownloadFailure(Cancellation(.download)).isShutdown)
        #expect(!DownloadFailure(TransferError(.aborted(.stalled(seconds: 1.0)))).isShutdown)
        #expect("\(DownloadFailure(Cancellation(.download)))" == "\(WireErrorMapping.rpcError(for: Cancellation(.download)))",
                "log lines read as before")
    }
}
