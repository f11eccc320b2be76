import Foundation
import ImageCacheKit
import ImageCacheProtocol
import Testing
@testable import ImageCacheServer

/// The one mapping from what the engine throws to the wire's error object: every engine error
/// case gets its contract code, kind and detail fields, and no text leaves unredacted.
@Suite("Wire error mapping: engine errors become the contract's error objects", .timeLimit(.minutes(1)))
struct WireErrorMappingTests {
    /// What a client reads of an error: code, kind, message and the detail fields.
    struct Wire: Equatable, CustomStringConvertible {
        var code: Int
        var kind: ErrorKind
        var message: String
        var field: String? = nil
        var reason: String? = nil
        var format: String? = nil

        init(_ kind: ErrorKind, _ message: String, field: String? = nil, reason: String? = nil, format: String? = nil) {
            code = kind.code
            self.kind = kind
            self.message = message
            self.field = field
            self.reason = reason
            self.format = format
        }

        init(_ error: RPCError) {
            code = error.code
            kind = error.kind
            message = error.message
            field = error.data.field
            reason = error.data.reason
            format = error.data.format
        }

        var description: String {
            "\(code) \(kind.rawValue) \"\(message)\" field=\(field ?? "-") reason=\(reason ?? "-") format=\(format ?? "-")"
        }
    }

    static func wire(_ error: any Error) -> Wire { Wire(WireErrorMapping.rpcError(for: error)) }

    @Test("every Imaging error: decode_failed with its format, too_large, invalid_params on size, internal")
    func imaging() {
        let table: [(ImagingError, Wire)] = [
            (.decodeFailed("JPEG: truncated (no end-of-image marker)", format: .jpeg),
             Wire(.decodeFailed, "JPEG: truncated (no end-of-image marker)", format: "jpeg")),
            (.decodeFailed("PNG: not decodable", format: .png), Wire(.decodeFailed, "PNG: not decodable", format: "png")),
            (.decodeFailed("not a JPEG, PNG, GIF or WebP image: 3C 21", format: nil),
             Wire(.decodeFailed, "not a JPEG, PNG, GIF or WebP image: 3C 21")),
            (.tooLarge(width: 30000, height: 30000, maxPixels: 100_000_000),
             Wire(.tooLarge, "image is 30000×30000 = 900000000 pixels, over the limit of 100000000")),
            (.needsMoreMemory(bytes: 60 << 20, budget: 28 << 20, decodeMemory: 32 << 20),
             Wire(.tooLarge, "decoding this image needs 60 MiB, more than the 28 MiB a large decode may hold (decode_memory = 32 MiB)")),
            (.invalidWidth, Wire(.invalidParams, "thumbnail width must be at least 1", field: "size")),
            (.library("TurboJPEG could not allocate a compressor"), Wire(.internal, "TurboJPEG could not allocate a compressor")),
        ]
        for (error, expected) in table {
            #expect(Self.wire(error) == expected)
            #expect(error.kind == expected.kind, "the engine's kind and the wire's agree for \(error)")
        }
    }

    @Test("a declared size whose pixel count overflows Int is said, not trapped on")
    func hugeDeclaredSize() {
        let error = ImagingError.tooLarge(width: .max, height: .max, maxPixels: 1)
        #expect(Self.wire(error).message.contains("more than \(Int.max) pixels"))
    }

    @Test("every cancellation is 1007 cancelled with its reason, one value for all of them")
    func cancellations() {
        let table: [(any Error, Wire)] = [
            (Cancellation.request, Wire(.cancelled, "the request was cancelled", reason: "cancelled")),
            (CancellationError(), Wire(.cancelled, "the request was cancelled", reason: "cancelled")),
            (Cancellation(.wait), Wire(.cancelled, "wait cancelled", reason: "cancelled")),
            (Cancellation(.transfer(url: "https://img.example/a.jpg"), reason: "recycled"),
             Wire(.cancelled, "transfer cancelled: https://img.example/a.jpg", reason: "recycled")),
            (Cancellation.shutdown, Wire(.cancelled, "the transfer engine is shut down", reason: "shutdown")),
            (Cancellation(.download), Wire(.cancelled, "the download was cancelled", reason: "cancelled")),
            (Cancellation(.verification(abandoned: true)), Wire(.cancelled, "the download's verification was abandoned", reason: "cancelled")),
            (Cancellation(.verification(abandoned: false)), Wire(.cancelled, "the download's verification was cancelled", reason: "cancelled")),
            (Cancellation(.search), Wire(.cancelled, "search cancelled", reason: "cancelled")),
            (Cancellation(.superseded(channel: "typeahead"), reason: "superseded"),
             Wire(.cancelled, "superseded by a newer search on channel 'typeahead'", reason: "superseded")),
            (Cancellation(.session, reason: "session_closed"), Wire(.cancelled, "session closed", reason: "session_closed")),
        ]
        for (error, expected) in table {
            #expect(Self.wire(error) == expected)
            #expect(isCancellation(error))
        }
        #expect(Cancellation.shutdown.isShutdown && !Cancellation.request.isShutdown)
    }

    @Test("cache writes and the pipeline's own failures: storage_unavailable, busy, internal, not_found")
    func cacheAndPipeline() {
        let full = CacheWriteError.fileSystem(CacheFileSystemError(operation: "write", path: "/c/x", code: ENOSPC))
        let descriptors = CacheWriteError.fileSystem(CacheFileSystemError(operation: "open", path: "/c/x", code: EMFILE))
        let table: [(any Error, ErrorKind)] = [
            (full, .storageUnavailable), (descriptors, .busy), (CacheWriteError.index("disk I/O error"), .storageUnavailable),
            (CacheWriteError.tooLarge(bytes: 10, limit: 5), .internal), (CacheWriteError.closed, .internal),
            (PipelineError.unknownPhoto(id: "unsplash:x"), .notFound),
            (PipelineError.cacheWriteFailed(full), .storageUnavailable), (PipelineError.cacheWriteFailed(nil), .internal),
        ]
        for (error, kind) in table {
            let wire = Self.wire(error)
            #expect(wire.kind == kind && wire.code == kind.code, "\(error) → \(wire)")
            #expect(wire.message == "\(error)")
        }
        #expect(Self.wire(PipelineError.unknownPhoto(id: "unsplash:x")).message == "unknown photo id unsplash:x: search for it first")
        #expect(Self.wire(PipelineError.cacheWriteFailed(nil)).message == "the thumbnail could not be written to the cache folder (no path)")
        #expect(Self.wire(PipelineError.cacheWriteFailed(.closed)).message
                == "the thumbnail could not be written to the cache folder (cache write skipped: the cache is closed)")
    }

    @Test("an error the server built passes as it is; one nobody knows is internal, its text withheld")
    func passThroughAndUnknown() {
        let busy = RPCError(.busy, "too many queued prefetches on this connection")
        #expect(WireErrorMapping.rpcError(for: busy) == busy)
        struct Surprise: Error { var secret = "s3cr3t-internal-state" }
        #expect(WireErrorMapping.mapped(Surprise()) is Surprise, "the dispatcher logs what it does not know")
        let unknown = WireErrorMapping.rpcError(for: Surprise())
        #expect(Wire(unknown) == Wire(.internal, "internal error"))
        #expect(!"\(unknown)".contains("s3cr3t"))
    }

    @Test("redaction is part of the mapping: a secret in any URL or body an error quotes never reaches the wire")
    func redaction() {
        let url = "https://user:hunter2@api.example/photos?api_key=SECRET123&q=cats"
        let transfer = WireErrorMapping.rpcError(for: Cancellation(.transfer(url: url)))
        #expect(!transfer.message.contains("SECRET123") && !transfer.message.contains("hunter2"), "\(transfer)")
        #expect(transfer.message.contains("api_key=REDACTED") && transfer.message.contains("q=cats"), "\(transfer)")

        // Texts built elsewhere (a library's message, an upstream body) are redacted too.
        let decode = WireErrorMapping.rpcError(for: ImagingError.decodeFailed("JPEG: bad marker in https://h/x.jpg?token=SECRET456",
                                                                              format: .jpeg))
        #expect(!decode.message.contains("SECRET456") && decode.message.contains("token=REDACTED"), "\(decode)")
        let upstream = WireErrorMapping.rpcError(for: RPCError(.upstreamError, "HTTP 500: https://h/x?key=SECRET789", status: 500,
                                                               body: "{\"echo\": \"https://h/x?key=SECRET789\"}"))
        #expect(!upstream.message.contains("SECRET789") && upstream.data.body?.contains("SECRET789") == false, "\(upstream)")
        #expect(upstream.data.status == 500 && upstream.code == 1003)
    }
}
