import Foundation
@testable import ImageCacheKit
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

    @Test("every transfer failure: its kind and code, the status, body and Retry-After it carries, the URL redacted")
    func transfers() {
        let url = "https://img.example/a.jpg?api_key=SECRET123"
        let shown = "https://img.example/a.jpg?api_key=REDACTED"
        let policy = TransferError(.schemeNotAllowed("file"), url: "file:///etc/passwd")
        let table: [(TransferError, Wire)] = [
            (TransferError(.notFetchable, url: "not a url"), Wire(.forbidden, "not a fetchable URL: not a url")),
            (TransferError(.httpNotAllowed, url: url), Wire(.forbidden, "http is not allowed (allow_http = false): \(shown)")),
            (policy, Wire(.forbidden, "scheme file is not allowed: file:///etc/passwd")),
            (TransferError(.hostNotAllowed("evil.example"), url: url), Wire(.forbidden, "host evil.example is not allowed: \(shown)")),
            (TransferError(.queueFull(waiting: 5000)), Wire(.busy, "the transfer queue is full (5000 waiting)")),
            (TransferError(.aborted(.tooLarge(limit: 100)), url: url), Wire(.tooLarge, "body exceeds max_image_bytes (100): \(shown)")),
            (TransferError(.aborted(.stalled(seconds: 1.0)), url: url), Wire(.timeout, "no data for 1.0 s (stall_timeout): \(shown)")),
            (TransferError(.aborted(.deadline(seconds: 30.0)), url: url),
             Wire(.timeout, "transfer exceeded transfer_timeout (30.0 s): \(shown)")),
            (TransferError(.aborted(.refusedAddress("internal address 10.0.0.1 refused")), url: url),
             Wire(.forbidden, "internal address 10.0.0.1 refused: \(shown)")),
            (TransferError(.aborted(.diskFailure("cannot create a body file", errno: ENOSPC)), url: url),
             Wire(.storageUnavailable, "cannot create a body file: \(shown)")),
            (TransferError(.aborted(.outOfDescriptors), url: url),
             Wire(.busy, "out of file descriptors (the open-file limit is reached); retry later: \(shown)")),
            (TransferError(.aborted(.rangeMismatch("asked bytes=10-, got bytes 0-9/20")), url: url),
             Wire(.upstreamError, "the server's partial answer does not continue the file (asked bytes=10-, got bytes 0-9/20): \(shown)")),
            (TransferError(.cannotConnect("Connection refused"), url: url), Wire(.networkUnavailable, "cannot connect (Connection refused): \(shown)")),
            (TransferError(.timedOut("Operation timed out"), url: url), Wire(.timeout, "timed out (Operation timed out): \(shown)")),
            (TransferError(.connectionFailed("Recv failure"), url: url), Wire(.networkUnavailable, "connection failed (Recv failure): \(shown)")),
            (TransferError(.truncated("transfer closed"), url: url), Wire(.upstreamError, "truncated body (transfer closed): \(shown)")),
            (TransferError(.protocolNotAllowed("ftp"), url: url), Wire(.forbidden, "protocol not allowed (ftp): \(shown)")),
            (TransferError(.curlRedirectLimit, url: url), Wire(.upstreamError, "too many redirects: \(shown)")),
            (TransferError(.otherCurl("SSL error"), url: url), Wire(.networkUnavailable, "transfer failed (SSL error): \(shown)")),
            (TransferError(.wrongSize("the body ended at 5 of 10 bytes"), url: url),
             Wire(.upstreamError, "the body ended at 5 of 10 bytes: \(shown)")),
            (TransferError(.tooManyRedirects(limit: 5), url: url), Wire(.upstreamError, "more than 5 redirects: \(shown)")),
            (TransferError(.redirectRefused(policy)), Wire(.forbidden, "redirect refused: scheme file is not allowed: file:///etc/passwd")),
            (TransferError(.redirectLoop, url: url), Wire(.upstreamError, "redirect loop at \(shown)")),
            (TransferError(.engine("curl_easy_init failed")), Wire(.internal, "curl_easy_init failed")),
        ]
        for (error, expected) in table {
            #expect(Self.wire(error) == expected)
            #expect(error.kind == expected.kind, "the engine's kind and the wire's agree for \(error)")
        }
        // Statuses: the fields each carries.
        let gone = WireErrorMapping.rpcError(for: TransferError(.status(410, excerpt: "gone", retryAfter: 5), url: url))
        #expect(gone.kind == .notFound && gone.message == "HTTP 410: \(shown)" && gone.data.status == 410)
        #expect(gone.data.body == nil && gone.data.retryAfter == nil)
        let limited = WireErrorMapping.rpcError(for: TransferError(.status(429, excerpt: "slow down", retryAfter: 7), url: url))
        #expect(limited.kind == .rateLimited && limited.data.retryAfter == 7 && limited.data.body == nil && limited.data.status == 429)
        let failing = WireErrorMapping.rpcError(for: TransferError(.status(503, excerpt: "echo key=SECRET123", retryAfter: 3), url: url))
        #expect(failing.kind == .upstreamError && failing.code == 1003 && failing.data.status == 503 && failing.data.retryAfter == 3)
        #expect(failing.data.body == "echo key=REDACTED", "\(failing)")
        let refused = WireErrorMapping.rpcError(for: TransferError(.status(403, excerpt: nil, retryAfter: 3), url: url))
        #expect(refused.kind == .upstreamError && refused.data.retryAfter == nil && refused.data.body == nil)
        // A provider's secrets (a key sent in a header) are redacted from every text too.
        var scrubbed = TransferError(.cannotConnect("proxy said: Client-ID abcdef123"), url: url)
        scrubbed.secrets = ["abcdef123"]
        #expect(!WireErrorMapping.rpcError(for: scrubbed).message.contains("abcdef123"))
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

    @Test("every provider failure: its kind, the status, body excerpt and Retry-After it carries, secrets redacted")
    func providers() {
        let table: [(ProviderError, Wire)] = [
            (ProviderError(.flickr, .missingKey),
             Wire(.providerUnavailable, "Flickr has no API key: set [providers.flickr] api_key in cache.conf or the FLICKR_API_KEY environment variable")),
            (ProviderError(.unsplash, .keyRefused, status: 401, body: "OAuth error"),
             Wire(.providerUnavailable, "Unsplash refused the configured API key (check [providers.unsplash] access_key or UNSPLASH_ACCESS_KEY)")),
            (ProviderError(.pixabay, .rateLimited(stated: 59.5), status: 429, retryAfter: 59.5),
             Wire(.rateLimited, "Pixabay rate limit reached; retry in 60 s")),
            (ProviderError(.pixabay, .rateLimited(stated: nil), retryAfter: 12), Wire(.rateLimited, "Pixabay rate limit reached")),
            (ProviderError(.flickr, .upstream(detail: "Invalid API Key (Key has invalid format)"), status: 200),
             Wire(.upstreamError, "Flickr answered an error: Invalid API Key (Key has invalid format)")),
            (ProviderError(.unsplash, .notJSON, status: 200, body: "<html>"),
             Wire(.upstreamError, "Unsplash answered something that is not the expected JSON")),
            (ProviderError(.pixabay, .missingField("hits"), status: 200),
             Wire(.upstreamError, "Pixabay answered without the required field 'hits'")),
            (ProviderError(.unsplash, .noSuchPhoto(id: "abc")), Wire(.notFound, "Unsplash has no photo 'abc'")),
            (ProviderError(.flickr, .apiURLNotURL("ht tp://x?api_key=SECRET1")),
             Wire(.providerUnavailable, "Flickr api_url is not a URL: ht tp://x?api_key=REDACTED")),
        ]
        for (error, expected) in table {
            #expect(Self.wire(error) == expected)
            #expect(error.kind == expected.kind, "the engine's kind and the wire's agree for \(error)")
        }
        // The detail fields each carries.
        let limited = WireErrorMapping.rpcError(for: ProviderError(.pixabay, .rateLimited(stated: nil), status: 429, retryAfter: 7))
        #expect(limited.data.retryAfter == 7 && limited.data.status == 429 && limited.data.body == nil)
        let refused = WireErrorMapping.rpcError(for: ProviderErrors.keyRefused(.unsplash, status: 401, body: Array("bad key k3yZ9".utf8),
                                                                               secrets: ["k3yZ9"]))
        #expect(refused.data.status == 401 && refused.data.body == "bad key REDACTED", "\(refused)")
        let failing = WireErrorMapping.rpcError(for: ProviderErrors.upstream(.flickr, status: 500, detail: "echo k3yZ9",
                                                                             body: Array("{\"echo\": \"k3yZ9\"}".utf8), secrets: ["k3yZ9"]))
        #expect(failing.code == 1003 && failing.data.status == 500, "\(failing)")
        #expect(!failing.message.contains("k3yZ9") && failing.data.body?.contains("k3yZ9") == false, "\(failing)")
        // A key in a transport error the provider's client saw is scrubbed too.
        let scrubbed = ProviderErrors.scrub(ProviderError(.flickr, .upstream(detail: "said s3cret"), body: "s3cret"), secrets: ["s3cret"])
        #expect(!"\(WireErrorMapping.rpcError(for: scrubbed))".contains("s3cret"))
        // The client's limiter fills in a wait after the error was made: the data says it, the message does not.
        var later = ProviderErrors.rateLimited(.unsplash, retryAfter: nil, status: 403)
        later.retryAfter = 30
        #expect(Self.wire(later) == Wire(.rateLimited, "Unsplash rate limit reached"))
        #expect(WireErrorMapping.rpcError(for: later).data.retryAfter == 30)
        #expect(ProviderErrors.rateLimited(.pixabay, retryAfter: .infinity).retryAfter == OutsideSeconds.cap, "an outside wait is clamped")
        #expect(ProviderErrors.rateLimited(.pixabay, retryAfter: .nan).retryAfter == nil, "NaN is unreadable, not kept")
    }

    @Test("a search or photo id refused before any provider: its kind, and the param at fault")
    func searches() {
        let table: [(SearchError, Wire)] = [
            (.unknownProvider("unsplsh", listKnown: true),
             Wire(.providerUnavailable, "unknown provider 'unsplsh' (known: unsplash, flickr, pixabay)")),
            (.unknownProvider("x", listKnown: false), Wire(.providerUnavailable, "unknown provider 'x'")),
            (.unknownPhoto(id: "unsplash:zz"), Wire(.notFound, "unknown photo 'unsplash:zz'")),
            (.notAPhotoID("zz"), Wire(.notFound, "'zz' is not a photo id (expected provider:id)")),
            (.noProviderID("flickr:"), Wire(.notFound, "'flickr:' has no provider id")),
            (.queryTooShort, Wire(.queryTooShort, "the query must have at least 3 characters after trimming", field: "query")),
            (.noQueryOrFeed, Wire(.invalidParams, "search needs a query or feed: \"recent\"", field: "query")),
            (.queryAndFeed, Wire(.invalidParams, "give either a query or a feed, not both", field: "feed")),
            (.pageBelowOne, Wire(.invalidParams, "page starts at 1", field: "page")),
            (.negativeDebounce, Wire(.invalidParams, "debounceMs cannot be negative", field: "debounceMs")),
        ]
        for (error, expected) in table {
            #expect(Self.wire(error) == expected)
            #expect(error.kind == expected.kind, "the engine's kind and the wire's agree for \(error)")
        }
    }

    @Test("every download refusal: forbidden, invalid_params on its param, not_found, the storage kinds, internal")
    func downloads() {
        let roots = ["/srv/a", "/srv/b"]
        let loop = DownloadError.symbolicLinkInPath("/srv/a/x")
        let table: [(DownloadError, Wire)] = [
            (.noUsableRoot(roots: roots), Wire(.forbidden, "no download root can be used (download_dir: /srv/a, /srv/b)")),
            (.directoryNotAbsolute, Wire(.invalidParams, "'directory' must be an absolute path", field: "directory")),
            (.folderUnresolvable("/x"), Wire(.forbidden, "the download folder /x cannot be resolved")),
            (.outsideRoots("/etc", roots: roots, requested: true), Wire(.forbidden, "/etc is outside the download roots (/srv/a, /srv/b)")),
            (.outsideRoots("/etc", roots: roots, requested: false),
             Wire(.forbidden, "the folder /etc is outside the download roots (/srv/a, /srv/b)")),
            (.climbsOutOfMissingFolder("/srv/a/n/.."), Wire(.forbidden, "/srv/a/n/.. climbs out of a folder that does not exist")),
            (.climbsOutOfRoot("/srv/a/..", component: ".."), Wire(.forbidden, "the folder /srv/a/.. climbs out of its root (`..` in its path)")),
            (loop, Wire(.forbidden, "the folder /srv/a/x passes through a symbolic link below its download root (refused: a download never follows one)")),
            (.notAFolder("/srv/a/f"), Wire(.forbidden, "the folder /srv/a/f is not a folder (a file stands in its path)")),
            (.folderGone("/srv/a/g", cause: .storage("cannot open the download folder /srv/a/g", errno: ENOENT)),
             Wire(.forbidden, "the download folder /srv/a/g is gone (cannot open the download folder /srv/a/g: No such file or directory)")),
            (.folderReplaced("/srv/a/r"),
             Wire(.forbidden, "the download folder /srv/a/r was replaced by another folder while the job ran; nothing was written to it")),
            (.invisibleCharacter(code: "U+202E"),
             Wire(.invalidParams, "'filename' holds an invisible format character (U+202E): a name must show what it is", field: "filename")),
            (.reservedSuffix(".part"), Wire(.invalidParams, "'filename' must not end with .part: the daemon names its partial files so", field: "filename")),
            (.reservedByLiveJob("/srv/a/p.jpg"), Wire(.forbidden, "/srv/a/p.jpg is reserved by a download job still running; overwrite never replaces it")),
            (.noFreeName(stem: "p", folder: "/srv/a"), Wire(.forbidden, "no free name for p in /srv/a")),
            (.partIsSymbolicLink("/srv/a/p.jpg.part"),
             Wire(.forbidden, "/srv/a/p.jpg.part was replaced by a symbolic link while the job ran; refused (a download never follows one)")),
            (.partReplaced("/srv/a/p.jpg.part"),
             Wire(.forbidden, "/srv/a/p.jpg.part was replaced by something other than the daemon's partial file while the job ran; refused")),
            (.partNotRegular("/srv/a/p.jpg.part"), Wire(.forbidden, "/srv/a/p.jpg.part exists and is not a regular file")),
            (.unknownPhoto(id: "unsplash:q"), Wire(.notFound, "unknown photo id unsplash:q (search for it first)")),
            (.unknownJob("d-9"), Wire(.notFound, "no download job d-9")),
            (.folderRefused(stage: .goOn, cause: loop), Wire(.forbidden, "the download cannot go on: \(loop)")),
            (.folderRefused(stage: .resume, cause: loop),
             Wire(.forbidden, "the download cannot resume: \(loop); its partial file, if any, is left where it is")),
            (.folderRefused(stage: .save, cause: loop), Wire(.forbidden, "the download cannot be saved: \(loop)")),
            (.storage("cannot write /srv/a/p.jpg", errno: ENOSPC), Wire(.storageUnavailable, "cannot write /srv/a/p.jpg: No space left on device")),
            (.storage("cannot open /srv/a/p.jpg", errno: EMFILE), Wire(.busy, "cannot open /srv/a/p.jpg: Too many open files")),
            (.internalFault("verification ended without a verdict"), Wire(.internal, "verification ended without a verdict")),
        ]
        for (error, expected) in table {
            #expect(Self.wire(error) == expected)
            #expect(error.kind == expected.kind, "the engine's kind and the wire's agree for \(error)")
        }
        // A file operation's own error (the job table's, a body's) keeps its errno's kind.
        #expect(Self.wire(StorageError("cannot write /s/jobs.json.tmp", errno: EROFS))
                == Wire(.storageUnavailable, "cannot write /s/jobs.json.tmp: Read-only file system"))
    }

    @Test("the server's own refusals: engine errors by kind (a recycled slot is a cancellation), on the wire as the contract has them")
    func serverRefusals() {
        let table: [(ServerError.Refusal, Wire)] = [
            (.unknownMethod("x.y"), Wire(.methodNotFound, "unknown method \"x.y\"")),
            (.pendingCap(64), Wire(.busy, "too many pending requests on this connection (max_pending_per_session = 64)")),
            (.shuttingDown, Wire(.busy, "the daemon is shutting down")),
            (.duplicateID(.string("a")), Wire(.invalidRequest, "a request with id \"a\" is already pending on this connection")),
            (.duplicateID(nil), Wire(.invalidRequest, "a request with id null is already pending on this connection")),
            (.prefetchQueueFull(queued: 3, cap: 4),
             Wire(.busy, "too many queued prefetches on this connection (3 queued, max_pending_per_session = 4)")),
            (.slotRecycled, Wire(.cancelled, "the slot was recycled", reason: "recycled")),
            (.prefetchCancelled, Wire(.cancelled, "the prefetch was cancelled", reason: "cancelled")),
            (.unknownLayoutPhoto(id: "unsplash:x", index: 2),
             Wire(.notFound, "unknown photo id 'unsplash:x' (photos[2]): layout places only photos a search returned",
                  field: "photos[2]")),
            (.cacheClearForbidden(uid: 1234, adminGroup: "staff"),
             Wire(.forbidden, "emptying the whole cache needs root, the daemon's user (uid \(PeerIdentity.daemonUID)) or a member of "
                  + "admin_group \"staff\"; you are uid 1234. cache.evict of one image is open to all")),
            (.cacheClearForbidden(uid: nil, adminGroup: nil),
             Wire(.forbidden, "emptying the whole cache needs root, the daemon's user (uid \(PeerIdentity.daemonUID)); "
                  + "the daemon could not read who you are. cache.evict of one image is open to all")),
        ]
        for (refusal, expected) in table {
            let error = ServerError(refusal)
            #expect(Self.wire(error) == expected)
            #expect(engineKind(of: error) == expected.kind)
            #expect(isCancellation(error) == (expected.kind == .cancelled))
        }
        // The wire's own error is not an engine error: the engine never sees it.
        #expect(engineKind(of: RPCError(.busy, "from the wire")) == .internal)
    }

    @Test("an error already built for the wire passes as it is; one nobody knows is internal, its text withheld")
    func passThroughAndUnknown() {
        let notFound = RPCError(.notFound, "unknown photo id 'x' (photos[0])", field: "photos[0]")
        #expect(WireErrorMapping.rpcError(for: notFound) == notFound)
        struct Surprise: Error { var secret = "s3cr3t-internal-state" }
        #expect(WireErrorMapping.mapped(Surprise()) is Surprise, "`Answer.failure` logs what it does not know")
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
