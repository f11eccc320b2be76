import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCacheConfig
import ImageCacheKit
import ImageCacheProtocol
import TestSupport

/// A test-only `HTTPFetching` over URLSession, standing in for the libcurl engine (not on main
/// yet) so providers and the coordinator talk real HTTP to the loopback simulator.
struct URLSessionFetcher: HTTPFetching {
    let session: URLSession

    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = 30
        session = URLSession(configuration: configuration)
    }

    func fetch(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let url = URL(string: request.url) else { throw TransferError(.notFetchable, url: request.url) }
        var urlRequest = URLRequest(url: url)
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        do {
            let (data, response) = try await session.data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else {
                throw TransferError(.connectionFailed("not HTTP"), url: request.url)
            }
            let headers = http.allHeaderFields.compactMap { k, v -> (String, String)? in
                guard let k = k as? String, let v = v as? String else { return nil }
                return (k, v)
            }
            return HTTPResponse(status: http.statusCode, headers: headers, body: [UInt8](data))
        } catch let error as TransferError {
            throw error
        } catch {
            // The engine's own error for a host it could not reach, as the curl engine throws.
            throw TransferError(.cannotConnect(error.localizedDescription), url: request.url)
        }
    }
}

/// Wraps a fetcher, counting what goes through and optionally holding every request at a gate
/// until the test opens it (to keep requests in flight without sleeping).
final class GatedFetcher: HTTPFetching {
    private let inner: any HTTPFetching
    private struct State {
        var open = true
        var waiting: [CheckedContinuation<Void, Never>] = []
        var arrived = 0
        var arrivalWaiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }
    private let state = LockedState(State())

    init(_ inner: any HTTPFetching, open: Bool = true) {
        self.inner = inner
        state.withLock { $0.open = open }
    }

    /// Requests that reached this fetcher so far.
    var arrived: Int { state.withLock { $0.arrived } }

    func fetch(_ request: HTTPRequest) async throws -> HTTPResponse {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let resume = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                s.arrived += 1
                var ready = s.arrivalWaiters.filter { $0.0 <= s.arrived }.map(\.1)
                s.arrivalWaiters.removeAll { $0.0 <= s.arrived }
                if s.open { ready.append(c) } else { s.waiting.append(c) }
                return ready
            }
            resume.forEach { $0.resume() }
        }
        return try await inner.fetch(request)
    }

    /// Returns once `count` requests have arrived.
    func waitForArrivals(_ count: Int) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.arrived >= count { return true }
                s.arrivalWaiters.append((count, c))
                return false
            }
            if now { c.resume() }
        }
    }

    func openGate() {
        let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.open = true
            defer { s.waiting = [] }
            return s.waiting
        }
        waiting.forEach { $0.resume() }
    }
}

/// A clock the test moves by hand: sleepers wake only when `advance` passes their deadline, so
/// debouncing and pacing are tested exactly, with no real waiting.
final class ManualClock: SchedulingClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now: Duration = .zero
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var sleeperWaiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }
    private let state = LockedState(State())

    var now: Duration { state.withLock { $0.now } }

    func sleep(for duration: Duration) async throws {
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let (immediate, waiters) = state.withLock { s -> (Bool, [CheckedContinuation<Void, Never>]) in
                    if duration <= .zero { return (true, []) }
                    s.sleepers.append(Sleeper(id: id, deadline: s.now + duration, continuation: c))
                    let ready = s.sleeperWaiters.filter { $0.0 <= s.sleepers.count }.map(\.1)
                    s.sleeperWaiters.removeAll { $0.0 <= s.sleepers.count }
                    return (false, ready)
                }
                waiters.forEach { $0.resume() }
                if immediate { c.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { s -> Sleeper? in
                guard let i = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: i)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has passed.
    func advance(by duration: Duration) {
        let due = state.withLock { s -> [Sleeper] in
            s.now += duration
            let due = s.sleepers.filter { $0.deadline <= s.now }
            s.sleepers.removeAll { $0.deadline <= s.now }
            return due
        }
        due.forEach { $0.continuation.resume() }
    }

    /// How many tasks are asleep on this clock.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Returns once at least `count` tasks sleep on this clock.
    func waitForSleepers(_ count: Int) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.sleepers.count >= count { return true }
                s.sleeperWaiters.append((count, c))
                return false
            }
            if now { c.resume() }
        }
    }
}

/// Corpus API responses as `HTTPResponse`s, status and headers from their sidecars when recorded.
enum CorpusAPI {
    static func response(_ name: String) throws -> HTTPResponse {
        let sidecarURL = Corpus.url("api/\(name).http.json")
        var status = 200
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        if let data = try? Data(contentsOf: sidecarURL),
           let sidecar = try JSONSerialization.jsonObject(with: data) as? [String: Any] {
            status = sidecar["status"] as? Int ?? 200
            headers = (sidecar["headers"] as? [String: String] ?? [:]).map { ($0.key, $0.value) }
            if let text = sidecar["body_text"] as? String { body = Array(text.utf8) }
        }
        if body.isEmpty { body = try Corpus.bytes("api/\(name).json") }
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    static func settings(_ provider: ProviderID, key: String? = "test-key-1234567", apiURL: String? = nil) -> ProviderSettings {
        let defaults = CacheConfiguration()
        return ProviderSettings(defaults, for: provider).with(key: key, apiURL: apiURL)
    }
}

extension ProviderSettings {
    func with(key: String?, apiURL: String?) -> ProviderSettings {
        var s = self
        s.apiKey = key
        if let apiURL { s.apiURL = apiURL }
        return s
    }
}


/// The decoded query items of a URL (as a server reads them, `+` meaning space).
func queryItems(_ url: String) -> [String: String] {
    var result: [String: String] = [:]
    for item in URLComponents(string: url)?.percentEncodedQueryItems ?? [] {
        let v = (item.value ?? "").replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
        result[item.name] = v
    }
    return result
}
