/// How urgent a transfer is. The scheduler admits higher priorities first; a queued
/// transfer can be upgraded (a prefetch becoming visible jumps the queue).
public enum TransferPriority: Int, Sendable, Comparable, CaseIterable {
    case prefetch = 0
    case download = 1
    case visible = 2

    public static func < (lhs: TransferPriority, rhs: TransferPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A whole-body GET, as provider API calls need it (small JSON bodies, kept in memory).
public struct HTTPRequest: Sendable {
    public var url: String
    public var headers: [(String, String)]
    package var priority: TransferPriority

    public init(url: String, headers: [(String, String)] = [], priority: TransferPriority = .visible) {
        self.url = url
        self.headers = headers
        self.priority = priority
    }
}

/// The answer to an `HTTPRequest`, whatever its status: mapping statuses to error kinds
/// is the caller's business (a provider knows that Flickr fails with a 200).
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names as received; look them up with `header(_:)`.
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the last header with this name (case-insensitive), as HTTP's last-wins rule has it.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.last { $0.0.lowercased() == lower }?.1
    }
}

/// The seam between whoever needs a body over HTTP (providers) and the transfer engine.
///
/// The libcurl engine implements it in production, so the URL policy, proxy rules, retries
/// and limits apply to every request; tests of a consumer may use any real HTTP client
/// against the loopback simulator. Transport failures throw `TransferError` with the contract's
/// kinds (`network_unavailable`, `timeout`, `forbidden`, `too_large`, `cancelled`).
public protocol HTTPFetching: Sendable {
    func fetch(_ request: HTTPRequest) async throws -> HTTPResponse
}
