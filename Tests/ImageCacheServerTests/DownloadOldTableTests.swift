import Foundation
@testable import ImageCacheConfig
@testable import ImageCacheKit
import ImageCacheProtocol
@testable import ImageCacheServer
import Logging
import Testing
import TestSupport

/// The job table keeps each job's failure in the engine's words (`DownloadFailure`) but in the
/// shape the wire's error object had on disk, so a table written by a daemon that stored the
/// wire error itself loads and lists the same errors, and what this daemon writes is that shape.
@Suite("Downloads: a job table written before the engine kept its own failure", .timeLimit(.minutes(1)))
struct DownloadOldTableTests {
    /// A table exactly as the daemon wrote it when its records held the wire's `RPCError`
    /// (produced by that build: an upstream 503 with its body and `Retry-After`, a cancel, a
    /// folder replaced before the move, a body that did not decode, a stall), with its times
    /// (`CREATED<n>`, `ENDED<n>`) made recent so that no job is past its day of listing.
    static let written = #"[{"endedAt":ENDED0,"received":10,"url":"https:\/\/img.example\/a.jpg?api_key=SECRET123","defaultName":true,"tracked":false,"state":"failed","owner":1000,"id":"dl-0000000000a1","error":{"code":1003,"message":"HTTP 503: https:\/\/img.example\/a.jpg?api_key=REDACTED","data":{"status":503,"retryAfter":3,"body":"busy, see https:\/\/x.example\/?api_key=REDACTED","kind":"upstream_error"}},"createdAt":CREATED0,"variant":"full","overwrite":false,"total":20,"reservation":{"number":0,"stem":"a0","ext":"jpg","directory":"\/tmp\/x"}},{"variant":"full","reservation":{"number":0,"stem":"a1","ext":"jpg","directory":"\/tmp\/x"},"received":10,"error":{"code":1007,"message":"the download was cancelled","data":{"kind":"cancelled","reason":"cancelled"}},"total":20,"createdAt":CREATED1,"endedAt":ENDED1,"tracked":false,"state":"cancelled","overwrite":false,"defaultName":true,"id":"dl-0000000000a2","url":"https:\/\/img.example\/a.jpg?api_key=SECRET123","owner":1000},{"owner":1000,"total":20,"variant":"full","reservation":{"stem":"a2","ext":"jpg","number":0,"directory":"\/tmp\/x"},"endedAt":ENDED2,"createdAt":CREATED2,"received":10,"overwrite":false,"url":"https:\/\/img.example\/a.jpg?api_key=SECRET123","tracked":false,"defaultName":true,"state":"failed","id":"dl-0000000000a3","error":{"code":1010,"message":"the download cannot be saved: the download folder \/tmp\/x was replaced by another folder while the job ran; nothing was written to it","data":{"kind":"forbidden"}}},{"tracked":false,"url":"https:\/\/img.example\/a.jpg?api_key=SECRET123","createdAt":CREATED3,"endedAt":ENDED3,"state":"failed","defaultName":true,"total":20,"overwrite":false,"error":{"code":1008,"message":"JPEG: truncated (no end-of-image marker)","data":{"kind":"decode_failed","format":"jpeg"}},"reservation":{"stem":"a3","directory":"\/tmp\/x","number":0,"ext":"jpg"},"variant":"full","owner":1000,"received":10,"id":"dl-0000000000a4"},{"error":{"code":1011,"message":"no data for 1.0 s (stall_timeout): https:\/\/img.example\/a.jpg?api_key=REDACTED","data":{"kind":"timeout"}},"defaultName":true,"id":"dl-0000000000a5","createdAt":CREATED4,"tracked":false,"url":"https:\/\/img.example\/a.jpg?api_key=SECRET123","received":10,"owner":1000,"reservation":{"number":0,"directory":"\/tmp\/x","ext":"jpg","stem":"a4"},"total":20,"overwrite":false,"endedAt":ENDED4,"state":"failed","variant":"full"}]"#

    /// The table's text with its times an hour ago.
    static func table(now: Date = Date()) -> String {
        var text = written
        for index in 0..<5 {
            let created = now.timeIntervalSinceReferenceDate.rounded() - 3600 + Double(index)
            text = text.replacingOccurrences(of: "CREATED\(index)", with: "\(Int(created))")
                .replacingOccurrences(of: "ENDED\(index)", with: "\(Int(created) + 100)")
        }
        return text
    }

    /// Each job's `error` object as the table holds it, read as the wire's error (what the old
    /// daemon answered for it), by job id.
    static func errors(in text: String) throws -> [String: RPCError] {
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        var errors: [String: RPCError] = [:]
        for row in rows {
            let id = try #require(row["id"] as? String)
            let error = try JSONSerialization.data(withJSONObject: try #require(row["error"]))
            errors[id] = try JSONDecoder().decode(RPCError.self, from: error)
        }
        return errors
    }

    /// Every row of a table as JSON objects, by job id (key order is the encoder's).
    static func rows(in data: Data) throws -> [String: NSDictionary] {
        let rows = try #require(try JSONSerialization.jsonObject(with: data) as? [NSDictionary])
        return Dictionary(uniqueKeysWithValues: rows.map { ($0["id"] as! String, $0) })
    }

    private func makeFolder() throws -> String {
        let folder = (NSTemporaryDirectory() + "/icoldtable-" + UUID().uuidString as NSString).standardizingPath
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("the manager loads it and lists, reads and words every error as the old daemon did")
    func listsTheSameErrors() async throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = Self.table()
        let expected = try Self.errors(in: text)
        #expect(expected.count == 5)
        let store = try DownloadJobStore(stateDirectory: folder, cacheDirectory: folder)
        try Data(text.utf8).write(to: URL(fileURLWithPath: store.path))
        store.release()  // the manager takes the table's lock
        try await withDownloadManager(cacheDirectory: folder) { manager in
            let listed = await manager.list(for: .daemon).map(DownloadJob.init)
            #expect(Set(listed.map(\.job)) == Set(expected.keys), "none was dropped as unreadable")
            for job in listed {
                #expect(job.error == expected[job.job], "download.list words \(job.job)'s error as before")
                let status = DownloadJob(try await manager.status(job.job, for: .daemon))
                #expect(status.error == expected[job.job], "download.status words \(job.job)'s error as before")
            }
            #expect(listed.first { $0.job == "dl-0000000000a1" }?.error?.data.retryAfter == 3)
            #expect(listed.first { $0.job == "dl-0000000000a2" }?.error?.data.reason == "cancelled")
            #expect(listed.first { $0.job == "dl-0000000000a4" }?.error?.data.format == "jpeg")
        }
    }

    @Test("written back, the table is the same JSON, and its errors read as the wire's error (an older daemon reads it)")
    func writesTheSameShape() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = Self.table()
        let store = try DownloadJobStore(stateDirectory: folder, cacheDirectory: folder)
        try Data(text.utf8).write(to: URL(fileURLWithPath: store.path))
        let loaded = store.load(logger: Logger(label: "test"))
        #expect(loaded.count == 5)
        #expect(loaded.allSatisfy { $0.error != nil })
        try store.save(loaded)
        let rewritten = try #require(FileManager.default.contents(atPath: store.path))
        #expect(try Self.rows(in: rewritten) == Self.rows(in: Data(text.utf8)), "every row, key and value as it was")
        #expect(try Self.errors(in: String(decoding: rewritten, as: UTF8.self)) == Self.errors(in: text))
        #expect(store.load(logger: Logger(label: "test")) == loaded, "and it reads back")
    }
}
