import Foundation
@testable import ImageCacheKit
import Logging
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A fresh folder under the system temp directory, removed by `remove()`.
struct TemporaryFolder {
    let path: String

    init(_ name: String = "cache") {
        let template = NSTemporaryDirectory() + "imagecached-\(name)-XXXXXX"
        var bytes = Array(template.utf8CString)
        let made = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A clock the test moves by hand, so expiry and path grace are tested without sleeping.
final class CacheTestClock: Sendable {
    private let seconds = LockedState<Double>(1_800_000_000)

    var cacheClock: CacheClock {
        CacheClock { [self] in Date(timeIntervalSince1970: self.seconds.withLock { $0 }) }
    }

    func advance(by duration: Double) {
        seconds.withLock { $0 += duration }
    }
}

/// The real file system with faults on demand: the seam tests use to play a full disk, a
/// read-only folder or a permission problem (chmod stops nothing for root).
final class FaultyFileSystem: CacheFileSystem {
    enum Fault: Sendable {
        /// `writeNewFile` fails with `code` (ENOSPC: disk full) after writing half the bytes.
        case writeFails(Int32)
        /// Creating any file or folder, renaming, unlinking and setting an extended
        /// attribute fail with `code` (EROFS).
        case readOnly(Int32)
        /// Setting an extended attribute fails with `code` (ENOTSUP: a file system that
        /// keeps none, like tmpfs before Linux 6.6; E2BIG: a value too big for it), and so
        /// does reading one when the code is ENOTSUP.
        case attributesRefused(Int32)
    }

    private let real = PosixCacheFileSystem()
    private let fault = LockedState<Fault?>(nil)

    func inject(_ fault: Fault?) {
        self.fault.withLock { $0 = fault }
    }

    private var current: Fault? { fault.withLock { $0 } }

    func createDirectory(atPath path: String) throws(CacheFileSystemError) {
        if case .readOnly(let code) = current, real.fileSize(atPath: path) == nil {
            throw CacheFileSystemError(operation: "mkdir", path: path, code: code)
        }
        try real.createDirectory(atPath: path)
    }

    func writeNewFile(atPath path: String, contents: Data) throws(CacheFileSystemError) {
        writes.pass()
        switch current {
        case .writeFails(let code):
            // Leave a partial file, as a real ENOSPC would, and fail.
            try? real.writeNewFile(atPath: path, contents: contents.prefix(contents.count / 2))
            try? real.removeFile(atPath: path)
            throw CacheFileSystemError(operation: "write", path: path, code: code)
        case .readOnly(let code):
            throw CacheFileSystemError(operation: "open", path: path, code: code)
        case nil, .attributesRefused:
            try real.writeNewFile(atPath: path, contents: contents)
        }
    }

    func writeFile(atPath path: String, contents: Data) throws(CacheFileSystemError) {
        switch current {
        case .writeFails(let code):
            throw CacheFileSystemError(operation: "write", path: path, code: code)
        case .readOnly(let code):
            throw CacheFileSystemError(operation: "open", path: path, code: code)
        case nil, .attributesRefused:
            try real.writeFile(atPath: path, contents: contents)
        }
    }

    func rename(_ source: String, to destination: String) throws(CacheFileSystemError) {
        if case .readOnly(let code) = current { throw CacheFileSystemError(operation: "rename", path: destination, code: code) }
        try real.rename(source, to: destination)
    }

    func removeFile(atPath path: String) throws(CacheFileSystemError) {
        if case .readOnly(let code) = current { throw CacheFileSystemError(operation: "unlink", path: path, code: code) }
        try real.removeFile(atPath: path)
    }

    /// Every `writeNewFile` (a content file being stored) passes this hold.
    let writes = Hold()
    /// Every `readFile` passes this hold.
    let reads = Hold()

    /// While held, each call that passes it counts itself in `waiting` and waits for
    /// `release`: a test can act in the middle of a read or a write (the calls must come from
    /// threads of the test's own).
    final class Hold: Sendable {
        /// Whether calls wait, and how many are waiting: one lock for both, so a call that
        /// checks the hold just as `release` runs is either counted (and released) or sees it
        /// open. (The count was read apart from the check: such a call could wait for good.)
        private let state = LockedState((held: false, registered: 0))
        private let gate = DispatchSemaphore(value: 0)
        let waiting = Observed(0)

        func hold() { state.withLock { $0.held = true } }

        /// Lets every held call (and later ones) go on.
        func release() {
            let registered = state.withLock { state -> Int in
                state.held = false
                defer { state.registered = 0 }
                return state.registered
            }
            for _ in 0..<registered { gate.signal() }
        }

        /// Waits here while held.
        func pass() {
            let mustWait = state.withLock { state -> Bool in
                if state.held { state.registered += 1 }
                return state.held
            }
            guard mustWait else { return }
            waiting.update { $0 += 1 }
            gate.wait()
        }
    }

    func readFile(atPath path: String) throws(CacheFileSystemError) -> Data {
        reads.pass()
        return try real.readFile(atPath: path)
    }
    func fileSize(atPath path: String) -> Int? { real.fileSize(atPath: path) }
    func contentsOfDirectory(atPath path: String) throws(CacheFileSystemError) -> [String] {
        try real.contentsOfDirectory(atPath: path)
    }

    func setAttribute(_ name: String, to value: Data, atPath path: String) throws(CacheFileSystemError) {
        switch current {
        case .readOnly(let code), .attributesRefused(let code):
            throw CacheFileSystemError(operation: "fsetxattr", path: path, code: code)
        case .writeFails, nil:
            try real.setAttribute(name, to: value, atPath: path)
        }
    }

    func attribute(_ name: String, atPath path: String) throws(CacheFileSystemError) -> Data {
        if case .attributesRefused(let code) = current, code == ENOTSUP {
            throw CacheFileSystemError(operation: "fgetxattr", path: path, code: code)
        }
        return try real.attribute(name, atPath: path)
    }
}

enum CacheTesting {
    static let logger: Logger = {
        var logger = Logger(label: "cache-tests")
        logger.logLevel = .critical
        return logger
    }()

    static func bytes(_ seed: Int, count: Int = 1000) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7) })
    }

    static func thumbKey(_ n: Int) -> CacheKey {
        CacheKey.thumbnail(url: "https://images.test/\(n).jpg", width: 256)
    }

    static let jpeg = CacheEntryInfo(contentType: "image/jpeg", width: 256, height: 170)

    /// Every regular file under `folder/data`, with its size.
    static func dataFiles(in folder: String) -> [String: Int] {
        var out: [String: Int] = [:]
        let data = folder + "/data"
        for shard in (try? FileManager.default.contentsOfDirectory(atPath: data)) ?? [] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: data + "/" + shard)) ?? [] {
                let path = data + "/" + shard + "/" + name
                out[path] = PosixCacheFileSystem().fileSize(atPath: path)
            }
        }
        return out
    }

    /// The bytes the entries under `folder/data` take, as the cache counts them: every
    /// file's size plus the description each content file carries in its attribute.
    static func storedBytes(in folder: String) -> Int {
        let fs = PosixCacheFileSystem()
        return dataFiles(in: folder).reduce(0) { total, file in
            let attribute = (try? fs.attribute(EntryDescription.attributeName, atPath: file.key))?.count ?? 0
            return total + file.value + attribute
        }
    }

    /// Files per entry under `cache`'s `data/`: the content file, plus a `.m` description
    /// file where the file system keeps no extended attributes.
    static func filesPerEntry(_ cache: DiskCache) -> Int {
        cache.descriptionsInAttributes ? 1 : 2
    }

    /// Whether this process may mount a tmpfs (root in a container with CAP_SYS_ADMIN).
    static let canMount: Bool = {
        let probe = TemporaryFolder("mount-probe")
        defer { probe.remove() }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe.path]) == 0 else { return false }
        _ = run("/bin/umount", [probe.path])
        return true
    }()

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        runShortTool(tool, arguments)
    }
}
