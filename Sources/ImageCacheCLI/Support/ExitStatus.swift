import ArgumentParser
import ImageCacheClient
import ImageCacheProtocol

/// The exit status of `imagecache` for each way a command can end.
///
/// Scripts branch on these, so each error kind a person could act on differently gets its own
/// code (retry later for `busy`/`rate_limited`, fix the query for `query_too_short`, start the
/// daemon for `daemonNotRunning`…). Codes follow sysexits(3) where one fits (64 usage, 69
/// unavailable, 70 software, 76 protocol, 77 permission) so they also read right to tools
/// that know that table; the contract's own kinds take 10…23. 130 is the shell's "interrupted".
public enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    /// Something not covered below, or a `demo` step failed.
    case failure = 1
    case queryTooShort = 10
    case providerUnavailable = 11
    case upstreamError = 12
    case rateLimited = 13
    case networkUnavailable = 14
    case notFound = 15
    case cancelled = 16
    case decodeFailed = 17
    case tooLarge = 18
    case forbidden = 19
    case timeout = 20
    case busy = 21
    /// The daemon does not know the method: it is older than this CLI.
    case methodNotFound = 22
    /// The cache or download folder cannot be written (full, read-only, gone): free space or
    /// fix the folder, then retry; not a bug of the daemon.
    case storageUnavailable = 23
    /// The item is a video, not a photo: there is nothing to save as a photo.
    case notAPhoto = 24
    /// Bad arguments, or the daemon refused the request's shape (`invalid_params`, …).
    case usage = 64
    /// Nothing listens on the socket.
    case daemonNotRunning = 69
    /// The daemon reported an internal error (a bug: see its log).
    case daemonInternal = 70
    /// The daemon's answer could not be read, or the connection broke.
    case protocolError = 76
    /// The socket belongs to another user.
    case permissionDenied = 77
    /// Ctrl-C.
    case interrupted = 130

    /// The status for an error kind the daemon answered.
    public init(kind: ErrorKind) {
        switch kind {
        case .parseError, .invalidRequest, .invalidParams: self = .usage
        case .methodNotFound: self = .methodNotFound
        case .internal: self = .daemonInternal
        case .queryTooShort: self = .queryTooShort
        case .providerUnavailable: self = .providerUnavailable
        case .upstreamError: self = .upstreamError
        case .rateLimited: self = .rateLimited
        case .networkUnavailable: self = .networkUnavailable
        case .notFound: self = .notFound
        case .cancelled: self = .cancelled
        case .decodeFailed: self = .decodeFailed
        case .tooLarge: self = .tooLarge
        case .forbidden: self = .forbidden
        case .timeout: self = .timeout
        case .busy: self = .busy
        case .storageUnavailable: self = .storageUnavailable
        case .notAPhoto: self = .notAPhoto
        }
    }

    /// The status for any error a command can meet: the daemon's `RPCError`, a client-side
    /// connection failure, a usage error of the CLI itself, or anything else (1).
    public init(error: any Error) {
        switch error {
        case let rpc as RPCError:
            self.init(kind: rpc.kind)
        case let client as ImageCacheClientError:
            switch client {
            case .daemonNotRunning: self = .daemonNotRunning
            case .permissionDenied: self = .permissionDenied
            case .connectFailed: self = .daemonNotRunning
            case .connectionClosed, .closedByClient, .invalidResponse: self = .protocolError
            }
        case is FollowedJobsLost:
            self = .protocolError
        case is UsageError:
            self = .usage
        case is CancellationError:
            self = .interrupted
        default:
            self = .failure
        }
    }

    /// What a person reads in `--help` for this status.
    public var meaning: String {
        switch self {
        case .success: return "success"
        case .failure: return "any other failure (a demo step failed, a file was not written)"
        case .queryTooShort: return "query_too_short: the query has fewer than 3 characters"
        case .providerUnavailable: return "provider_unavailable: unknown provider, or no API key for it"
        case .upstreamError: return "upstream_error: the provider or image host answered an error"
        case .rateLimited: return "rate_limited: the provider's quota is spent; retry later"
        case .networkUnavailable: return "network_unavailable: DNS or connect failed"
        case .notFound: return "not_found: unknown photo id, or 404 for an image"
        case .cancelled: return "cancelled: the request or job was cancelled"
        case .notAPhoto: return "not_a_photo: the item is a video, which is not saved as a photo"
        case .decodeFailed: return "decode_failed: the bytes are not a JPEG or PNG"
        case .tooLarge: return "too_large: the image is over the byte or pixel limit"
        case .forbidden: return "forbidden: URL or destination not allowed"
        case .timeout: return "timeout: the transfer stalled or took too long"
        case .busy: return "busy: the daemon's queue is full or it is out of descriptors"
        case .methodNotFound: return "method_not_found: the daemon is older than this CLI"
        case .storageUnavailable: return "storage_unavailable: the cache or download folder is full or gone"
        case .usage: return "usage: bad arguments, or the daemon's invalid_params/request"
        case .daemonNotRunning: return "the daemon is not running (nothing listens on the socket)"
        case .daemonInternal: return "internal: a bug in the daemon (see its log)"
        case .protocolError: return "the connection broke or the answer could not be read"
        case .permissionDenied: return "permission denied on the socket"
        case .interrupted: return "interrupted by Ctrl-C"
        }
    }

    /// The exit-status table of `imagecache --help`.
    public static var helpTable: String {
        allCases.map { status in
            let code = String(status.rawValue)
            return String(repeating: " ", count: max(0, 5 - code.count)) + code + "  " + status.meaning
        }.joined(separator: "\n")
    }
}

/// A mistake in the command line found after parsing (for example `--page 0`), reported
/// with exit status 64 like the parser's own errors.
public struct UsageError: Error, CustomStringConvertible, Sendable {
    /// What is wrong and how to write it instead.
    public var description: String
    public init(_ description: String) { self.description = description }
}
