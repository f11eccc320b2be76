#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ImageCacheConfig
import ImageCacheKit
import TestSupport

/// One HTTP exchange with the metrics endpoint over a real socket (TCP on loopback or a Unix
/// socket), with a plain blocking client: the request is written whole, the answer read to the
/// end (the endpoint closes after each answer), on a thread of its own, never the cooperative
/// pool the daemon under test needs. Every read and write is bounded by `SO_RCVTIMEO`/`SO_SNDTIMEO`.
struct HTTPExchange: Sendable {
    var status: Int
    var headers: [String: String]
    var body: String

    enum Failure: Error { case socket(String, Int32), malformed(String) }

    /// Sends `method path` to `address` and returns the answer.
    static func send(_ method: String, _ path: String, to address: MetricsListenAddress,
                     extraHeaders: [String] = []) async throws -> HTTPExchange {
        try await withTimeout(seconds: 30) {
            try await offCooperativePool { try exchange(method, path, address, extraHeaders) }
        }
    }

    private static func exchange(_ method: String, _ path: String, _ address: MetricsListenAddress,
                                 _ extraHeaders: [String]) throws -> HTTPExchange {
        let fd: Int32
        switch address {
        case .tcp(let host, let port):
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw Failure.socket("socket", errno) }
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &sin.sin_addr)
            try bounded(fd)
            let result = withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard result == 0 else { let e = errno; close(fd); throw Failure.socket("connect", e) }
        case .unix(let path):
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw Failure.socket("socket", errno) }
            var sun = sockaddr_un()
            sun.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &sun.sun_path) { raw in
                for (i, byte) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
            }
            try bounded(fd)
            let result = withUnsafePointer(to: &sun) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard result == 0 else { let e = errno; close(fd); throw Failure.socket("connect", e) }
        }
        defer { close(fd) }
        let request = ([ "\(method) \(path) HTTP/1.1", "Host: localhost"] + extraHeaders).joined(separator: "\r\n") + "\r\n\r\n"
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure.socket("write", errno) }
            sent += n
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { break }
            guard n > 0 else { throw Failure.socket("read", errno) }
            answer += chunk[..<n]
        }
        return try parse(String(decoding: answer, as: UTF8.self))
    }

    /// At most 30 seconds for any read or write on `fd`.
    private static func bounded(_ fd: Int32) throws {
        var limit = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func parse(_ text: String) throws -> HTTPExchange {
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure.malformed(text) }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformed(lines[0]) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return HTTPExchange(status: status, headers: headers, body: String(text[split.upperBound...]))
    }
}

/// The samples of a Prometheus text exposition (format 0.0.4), parsed strictly enough to fail
/// on a malformed line: `name{label="value",…} number`, `# HELP`/`# TYPE` lines, nothing else.
struct Exposition: Sendable {
    struct Sample: Sendable, Hashable {
        var name: String
        var labels: [String: String]
    }

    var samples: [Sample: Double] = [:]
    var types: [String: String] = [:]

    enum Failure: Error { case malformed(String) }

    init(_ text: String) throws {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4 else { throw Failure.malformed(String(line)) }
                types[String(parts[2])] = String(parts[3])
                continue
            }
            if line.hasPrefix("# HELP ") { continue }
            guard !line.hasPrefix("#") else { throw Failure.malformed(String(line)) }
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                throw Failure.malformed(String(line))
            }
            let series = line[..<space]
            var labels: [String: String] = [:]
            let name: Substring
            if let brace = series.firstIndex(of: "{") {
                guard series.last == "}" else { throw Failure.malformed(String(line)) }
                name = series[..<brace]
                var rest = series[series.index(after: brace)..<series.index(before: series.endIndex)]
                while !rest.isEmpty {
                    guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)] == "\"" else {
                        throw Failure.malformed(String(line))
                    }
                    let key = String(rest[..<equals])
                    var index = rest.index(equals, offsetBy: 2)
                    var value = ""
                    while index < rest.endIndex, rest[index] != "\"" {
                        if rest[index] == "\\" { index = rest.index(after: index) }
                        guard index < rest.endIndex else { throw Failure.malformed(String(line)) }
                        value.append(rest[index])
                        index = rest.index(after: index)
                    }
                    guard index < rest.endIndex else { throw Failure.malformed(String(line)) }
                    labels[key] = value
                    rest = rest[rest.index(after: index)...]
                    if rest.first == "," { rest = rest.dropFirst() }
                }
            } else {
                name = series
            }
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }) else {
                throw Failure.malformed(String(line))
            }
            samples[Sample(name: String(name), labels: labels)] = value
        }
    }

    /// The value of one series; 0 when it is absent (a counter not yet created has counted nothing).
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples[Sample(name: name, labels: labels)] ?? 0
    }

    /// Whether the series is present at all.
    func has(_ name: String, _ labels: [String: String] = [:]) -> Bool {
        samples[Sample(name: name, labels: labels)] != nil
    }
}

/// Scrapes `/metrics` at `address` and parses it, requiring a 200 with the text format.
func scrape(_ address: MetricsListenAddress) async throws -> Exposition {
    let answer = try await HTTPExchange.send("GET", "/metrics", to: address)
    guard answer.status == 200 else { throw Exposition.Failure.malformed("status \(answer.status): \(answer.body)") }
    return try Exposition(answer.body)
}
