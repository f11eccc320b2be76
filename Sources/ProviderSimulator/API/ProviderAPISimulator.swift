import ImageCacheSupport
import Foundation

/// The three providers' APIs on the loopback server, as tests, the offline demo and the
/// benchmarks need them: the real request shapes, deterministic answers (`SimulatedCatalog`),
/// key checks, quota headers and quota answers, faults on demand, and a count of every request
/// so a test can prove that "no request was made".
///
/// One server serves all three under path prefixes; point each provider's `api_url` at
/// `apiURL(for:)`:
/// - Unsplash `<base>/unsplash`: `/search/photos`, `/photos`, `/photos/:id`, `/photos/:id/download`
/// - Flickr `<base>/flickr/services/rest?method=…` (search, getRecent, getInfo)
/// - Pixabay `<base>/pixabay/api/` (`q`, `order=latest`, `id=`)
///
/// Unknown routes answer 404, so they count too. The handler never blocks (NIO event loop).
public final class ProviderAPISimulator: Sendable {
    /// A failure to answer instead of the normal response, until cleared.
    public enum Fault: Sendable, Hashable {
        /// Any status with a plain-text body.
        case status(Int, body: String)
        /// 200 with a body that is not JSON.
        case malformedBody
        /// Flickr's HTTP 200 `stat: "fail"` answer.
        case flickrFail(code: Int, message: String)
        /// Any status with a plain-text body and exactly these extra headers (a hostile
        /// `Retry-After: 1e300`, `X-RateLimit-Reset: inf`…).
        case withHeaders(Int, body: String, headers: [String: String])
    }

    /// A provider's quota: each request that is answered normally spends one.
    public struct Quota: Sendable, Hashable {
        /// `X-RateLimit-Limit`.
        public var limit: Int
        /// Requests left; at 0 the provider's quota answer is sent.
        public var remaining: Int
        /// Seconds until the window resets (Pixabay's `X-RateLimit-Reset`).
        public var resetAfter: Int
        public init(limit: Int, remaining: Int, resetAfter: Int = 60) {
            self.limit = limit
            self.remaining = remaining
            self.resetAfter = resetAfter
        }
    }

    struct State {
        var keys: [String: String]
        var imageBaseURL: String
        var requests: [String: [SimulatedRequest]] = [:]
        var quotas: [String: Quota] = [:]
        var faults: [String: Fault] = [:]
        var totals: [String: Int] = [:]
    }

    let state: LockedState<State>

    /// The provider names the simulator serves.
    public static let providers = ["unsplash", "flickr", "pixabay"]

    /// - Parameters:
    ///   - keys: the key each provider accepts (by provider name); a provider missing here
    ///     accepts none.
    ///   - imageBaseURL: where image URLs point (the server's own base once it runs).
    public init(keys: [String: String] = ProviderAPISimulator.defaultKeys, imageBaseURL: String = "http://127.0.0.1") {
        state = LockedState(State(keys: keys, imageBaseURL: imageBaseURL))
        state.withLock {
            $0.quotas["unsplash"] = Quota(limit: 5_000, remaining: 5_000, resetAfter: 3_600)
            $0.quotas["pixabay"] = Quota(limit: 5_000, remaining: 5_000, resetAfter: 60)
        }
    }

    /// Keys tests configure unless they test key checks.
    public static let defaultKeys = ["unsplash": "sim-unsplash-key", "flickr": "sim-flickr-key", "pixabay": "sim-pixabay-key"]

    /// The `api_url` of a provider on a server at `baseURL`.
    public static func apiURL(for provider: String, baseURL: String) -> String {
        switch provider {
        case "flickr": return baseURL + "/flickr/services/rest"
        case "pixabay": return baseURL + "/pixabay/api"
        default: return baseURL + "/unsplash"
        }
    }

    // MARK: control

    /// Where image URLs in answers point (set once the server's port is known).
    public func setImageBaseURL(_ url: String) { state.withLock { $0.imageBaseURL = url } }
    /// Makes every later request of a provider fail this way; nil restores normal answers.
    public func setFault(_ fault: Fault?, for provider: String) { state.withLock { $0.faults[provider] = fault } }
    /// Sets a provider's quota (nil: unlimited, no quota headers).
    public func setQuota(_ quota: Quota?, for provider: String) { state.withLock { $0.quotas[provider] = quota } }
    /// A provider's quota as it stands.
    public func quota(for provider: String) -> Quota? { state.withLock { $0.quotas[provider] } }
    /// Fixes the reported total of one query (Pixabay: `total`; `totalHits` is capped at 500).
    public func setTotal(_ total: Int, for provider: String, query: String) {
        state.withLock { $0.totals[provider + "|" + query] = total }
    }

    /// Requests received for a provider so far (all routes, answered or refused).
    public func requestCount(_ provider: String) -> Int { state.withLock { $0.requests[provider]?.count ?? 0 } }
    /// Requests received for a provider, oldest first.
    public func requests(_ provider: String) -> [SimulatedRequest] { state.withLock { $0.requests[provider] ?? [] } }

    /// Provider API requests received so far (all providers), published as each arrives: a
    /// test awaits a request it expects (`wait(until:)`, then looks at `requests(_:)`)
    /// instead of polling the log.
    public let requestArrivals = Observed(0)
    /// Requests received for all providers.
    public var totalRequests: Int { requestArrivals.value }

    // MARK: handling

    /// The answer to a request, or nil when its path is not one of the APIs (so a combined
    /// server can try its other halves).
    public func handle(_ request: SimulatedRequest) -> SimulatedResponse? {
        let path = request.path
        let provider: String
        if path == "/unsplash" || path.hasPrefix("/unsplash/") {
            provider = "unsplash"
        } else if path.hasPrefix("/flickr/") {
            provider = "flickr"
        } else if path.hasPrefix("/pixabay/") {
            provider = "pixabay"
        } else {
            return nil
        }
        let (key, base, fault, total) = state.withLock { s -> (String?, String, Fault?, Int?) in
            s.requests[provider, default: []].append(request)
            let q = FormQuery.value(provider == "unsplash" ? "query" : provider == "flickr" ? "text" : "q", in: request.uri) ?? ""
            return (s.keys[provider], s.imageBaseURL, s.faults[provider], s.totals[provider + "|" + q])
        }
        requestArrivals.update { $0 += 1 }
        if let fault { return answer(fault) }
        let context = Context(request: request, key: key, imageBase: base, totalOverride: total, simulator: self)
        switch provider {
        case "unsplash": return UnsplashAPI.handle(context)
        case "flickr": return FlickrAPI.handle(context)
        default: return PixabayAPI.handle(context)
        }
    }

    /// Spends one unit of quota; nil when there was one, else the quota (exhausted).
    func spend(_ provider: String) -> (ok: Bool, quota: Quota?) {
        state.withLock { s in
            guard var q = s.quotas[provider] else { return (true, nil) }
            guard q.remaining > 0 else { return (false, q) }
            q.remaining -= 1
            s.quotas[provider] = q
            return (true, q)
        }
    }

    private func answer(_ fault: Fault) -> SimulatedResponse {
        switch fault {
        case .status(let status, let body):
            return .text(body, status: status)
        case .malformedBody:
            return SimulatedResponse(status: 200, headers: [("Content-Type", "application/json")],
                                     body: Array("<html><body>Service Unavailable</body></html>".utf8))
        case .flickrFail(let code, let message):
            return SimulatedJSON.response(["stat": "fail", "code": code, "message": message],
                                          contentType: "text/plain; charset=utf-8")
        case .withHeaders(let status, let body, let headers):
            var response = SimulatedResponse.text(body, status: status)
            response.headers += headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            return response
        }
    }

    /// What one provider handler needs.
    struct Context {
        let request: SimulatedRequest
        let key: String?
        let imageBase: String
        let totalOverride: Int?
        let simulator: ProviderAPISimulator

        func query(_ name: String) -> String? { FormQuery.value(name, in: request.uri) }
        func int(_ name: String) -> Int? { query(name).flatMap { Int($0) } }
    }
}

/// JSON bodies for simulated answers.
enum SimulatedJSON {
    static func response(_ object: Any, status: Int = 200, contentType: String = "application/json",
                         headers: [(String, String)] = []) -> SimulatedResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return SimulatedResponse(status: status, headers: [("Content-Type", contentType)] + headers, body: Array(data))
    }
}
