// cache-crash-writer: the child process of the disk cache's crash test.
//
// Usage: cache-crash-writer <cache-folder> <first-index> <disk-limit-bytes>
//
// Opens the disk cache and stores entries first-index, first-index+1, … for ever, each
// with content derived only from its index (see `CrashPattern.bytes(for:)`), printing the
// index on stdout once its put has returned. Every seventh put rewrites an earlier entry
// and every eleventh removes one, so a kill can land in a replace or a delete too. The test
// kills it with SIGKILL at random moments and checks what the next open serves.
import Foundation
import ImageCacheKit
import Logging

/// The content of entry `index`: a length between 1 KiB and ~96 KiB and bytes from a
/// xorshift generator seeded by the index, so the test can regenerate and compare them.
enum CrashPattern {
    static func key(_ index: Int) -> CacheKey {
        CacheKey.thumbnail(url: "https://crash.test/\(index).jpg", width: 64)
    }

    static func bytes(for index: Int) -> Data {
        var state = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15 | 1
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        let count = 1024 + Int(next() % (95 * 1024))
        var out = [UInt8](repeating: 0, count: count)
        for i in 0..<count { out[i] = UInt8(truncatingIfNeeded: next()) }
        return Data(out)
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let first = Int(arguments[2]), let limit = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: cache-crash-writer <folder> <first-index> <disk-limit>\n".utf8))
    exit(2)
}
var logger = Logger(label: "cache-crash-writer")
logger.logLevel = .error
let cache: DiskCache
do {
    cache = try DiskCache(directory: arguments[1], limit: limit, pathGrace: .seconds(0), logger: logger)
} catch {
    FileHandle.standardError.write(Data("open failed: \(error)\n".utf8))
    exit(1)
}
/// One line per acknowledged operation, written unbuffered so a kill loses none already made.
func acknowledge(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
var index = first
while true {
    do {
        try cache.put(CrashPattern.key(index), bytes: CrashPattern.bytes(for: index),
                      info: CacheEntryInfo(contentType: "application/octet-stream"))
        acknowledge(String(index))
        if index % 7 == 0 && index > first {
            let earlier = first + (index - first) / 2
            try cache.put(CrashPattern.key(earlier), bytes: CrashPattern.bytes(for: earlier),
                          info: CacheEntryInfo(contentType: "application/octet-stream"))
        }
        if index % 11 == 0 && index > first + 3 {
            cache.remove(CrashPattern.key(index - 3))
            acknowledge("removed \(index - 3)")
        }
    } catch {
        FileHandle.standardError.write(Data("put failed: \(error)\n".utf8))
        exit(1)
    }
    index += 1
}
