import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A failed file operation of the disk cache, with the `errno` that explains it (ENOSPC for
/// a full disk, EROFS for a read-only folder, EACCES/EPERM for permissions, ENOENT for a
/// folder removed from outside).
public struct CacheFileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call that failed (`open`, `write`, `rename`…).
    public var operation: String
    /// The path it was applied to.
    public var path: String
    /// The error number it returned.
    public var code: Int32

    public var description: String { "\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))" }
}

/// The file operations the disk cache needs, and nothing more.
///
/// A seam so that tests can make one operation fail the way a full disk, a read-only mount
/// or a permission problem would (tests run as root, where `chmod` stops nothing), while the
/// real implementation, `PosixCacheFileSystem`, stays a thin layer over the system calls.
/// Every method throws `CacheFileSystemError` with the system's `errno`.
public protocol CacheFileSystem: Sendable {
    /// Creates `path` and any missing parents; an existing directory is fine.
    func createDirectory(atPath path: String) throws(CacheFileSystemError)
    /// Creates `path`, which must not exist, holding exactly `contents`.
    func writeNewFile(atPath path: String, contents: Data) throws(CacheFileSystemError)
    /// Creates or truncates `path` and writes `contents` (not atomic: for files whose torn
    /// state is recognised by their reader, like an entry's description).
    func writeFile(atPath path: String, contents: Data) throws(CacheFileSystemError)
    /// Atomically renames `source` to `destination`, replacing it.
    func rename(_ source: String, to destination: String) throws(CacheFileSystemError)
    /// Removes a file; a missing file is not an error.
    func removeFile(atPath path: String) throws(CacheFileSystemError)
    /// The whole content of a file.
    func readFile(atPath path: String) throws(CacheFileSystemError) -> Data
    /// The size of a file, or nil when it does not exist.
    func fileSize(atPath path: String) -> Int?
    /// The names in a directory (without `.` and `..`).
    func contentsOfDirectory(atPath path: String) throws(CacheFileSystemError) -> [String]
    /// Sets the extended attribute `name` of the file at `path` to `value`, replacing any,
    /// through a descriptor of that file (a symlink there is refused, not followed). Fails
    /// with ENOTSUP where the file system keeps no such attributes, and with E2BIG, ENOSPC
    /// or ERANGE when `value` is too big for it.
    func setAttribute(_ name: String, to value: Data, atPath path: String) throws(CacheFileSystemError)
    /// The value of the extended attribute `name` of the file at `path`, read through a
    /// descriptor of that file (a symlink there is refused, not followed). Fails with ENODATA
    /// when the file has no such attribute, ENOTSUP where the file system keeps none.
    func attribute(_ name: String, atPath path: String) throws(CacheFileSystemError) -> Data
    /// Writes `contents` to `path` (created, which must not exist, when `exclusive`; else
    /// truncated), then, when given, sets its extended attribute `attribute.name` to
    /// `attribute.value`. A write that fails throws (the file removed); an attribute that
    /// fails is returned (the file written either way), with the codes `setAttribute` would throw.
    func writeFile(atPath path: String, contents: Data, exclusive: Bool,
                   attribute: (name: String, value: Data)?) throws(CacheFileSystemError) -> CacheFileSystemError?
}

extension CacheFileSystem {
    /// The write and the attribute as two steps: what a file system seam that fails them one
    /// by one (the tests') does; the real one sets the attribute through the descriptor that
    /// wrote the file.
    public func writeFile(atPath path: String, contents: Data, exclusive: Bool,
                          attribute: (name: String, value: Data)?) throws(CacheFileSystemError) -> CacheFileSystemError? {
        if exclusive {
            try writeNewFile(atPath: path, contents: contents)
        } else {
            try writeFile(atPath: path, contents: contents)
        }
        guard let attribute else { return nil }
        do throws(CacheFileSystemError) {
            try setAttribute(attribute.name, to: attribute.value, atPath: path)
            return nil
        } catch {
            return error
        }
    }
}

/// The real file system, through POSIX calls (cheaper than `FileManager` on the hot path).
public struct PosixCacheFileSystem: CacheFileSystem {
    /// The file system of the running process (stateless).
    public init() {}

    public func createDirectory(atPath path: String) throws(CacheFileSystemError) {
        if mkdir(path, 0o755) == 0 { return }
        let code = errno
        if code == EEXIST { return }
        if code == ENOENT {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty && parent != path {
                try createDirectory(atPath: parent)
                if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
                throw CacheFileSystemError(operation: "mkdir", path: path, code: errno)
            }
        }
        throw CacheFileSystemError(operation: "mkdir", path: path, code: code)
    }

    public func writeNewFile(atPath path: String, contents: Data) throws(CacheFileSystemError) {
        _ = try writeAll(path, contents, flags: O_EXCL, attribute: nil)
    }

    public func writeFile(atPath path: String, contents: Data) throws(CacheFileSystemError) {
        _ = try writeAll(path, contents, flags: O_TRUNC, attribute: nil)
    }

    /// One descriptor for the write and the attribute: on ext4, opening the file again by
    /// path and closing it cost as much as setting the attribute itself.
    public func writeFile(atPath path: String, contents: Data, exclusive: Bool,
                          attribute: (name: String, value: Data)?) throws(CacheFileSystemError) -> CacheFileSystemError? {
        try writeAll(path, contents, flags: exclusive ? O_EXCL : O_TRUNC, attribute: attribute)
    }

    /// Writes the whole file, then sets `attribute` through the same descriptor when there
    /// is one; returns the attribute's failure.
    private func writeAll(_ path: String, _ contents: Data, flags: Int32,
                          attribute: (name: String, value: Data)?) throws(CacheFileSystemError) -> CacheFileSystemError? {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0o644)
        guard fd >= 0 else { throw CacheFileSystemError(operation: "open", path: path, code: errno) }
        var failure: Int32 = 0
        contents.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += n
            }
        }
        var attributeFailure: CacheFileSystemError?
        if failure == 0, let attribute {
            let done = attribute.value.withUnsafeBytes { raw in fsetxattr(fd, attribute.name, raw.baseAddress, raw.count, 0) }
            if done != 0 { attributeFailure = CacheFileSystemError(operation: "fsetxattr", path: path, code: errno) }
        }
        if close(fd) != 0 && failure == 0 { failure = errno }
        if failure != 0 {
            unlink(path)
            throw CacheFileSystemError(operation: "write", path: path, code: failure)
        }
        return attributeFailure
    }

    public func rename(_ source: String, to destination: String) throws(CacheFileSystemError) {
        guard Glibc.rename(source, destination) == 0 else {
            throw CacheFileSystemError(operation: "rename", path: destination, code: errno)
        }
    }

    public func removeFile(atPath path: String) throws(CacheFileSystemError) {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw CacheFileSystemError(operation: "unlink", path: path, code: errno)
        }
    }

    public func readFile(atPath path: String) throws(CacheFileSystemError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CacheFileSystemError(operation: "open", path: path, code: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CacheFileSystemError(operation: "fstat", path: path, code: errno) }
        var size = Int(info.st_size)
        var data = Data(count: size)
        var failure: Int32 = 0
        let got = data.withUnsafeMutableBytes { raw -> Int in
            var offset = 0
            while offset < size {
                let n = read(fd, raw.baseAddress! + offset, size - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return offset
                }
                if n == 0 { break }
                offset += n
            }
            return offset
        }
        if failure != 0 { throw CacheFileSystemError(operation: "read", path: path, code: failure) }
        if got < size {
            size = got
            data.removeSubrange(got...)
        }
        return data
    }

    public func fileSize(atPath path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    public func contentsOfDirectory(atPath path: String) throws(CacheFileSystemError) -> [String] {
        guard let dir = opendir(path) else {
            throw CacheFileSystemError(operation: "opendir", path: path, code: errno)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    public func setAttribute(_ name: String, to value: Data, atPath path: String) throws(CacheFileSystemError) {
        let fd = try openForAttributes(path)
        defer { close(fd) }
        let done = value.withUnsafeBytes { raw in fsetxattr(fd, name, raw.baseAddress, raw.count, 0) }
        guard done == 0 else { throw CacheFileSystemError(operation: "fsetxattr", path: path, code: errno) }
    }

    public func attribute(_ name: String, atPath path: String) throws(CacheFileSystemError) -> Data {
        let fd = try openForAttributes(path)
        defer { close(fd) }
        // Asked for its size first, then read; ERANGE means it grew between the two calls.
        while true {
            let size = fgetxattr(fd, name, nil, 0)
            guard size >= 0 else { throw CacheFileSystemError(operation: "fgetxattr", path: path, code: errno) }
            var value = Data(count: size)
            let got = value.withUnsafeMutableBytes { raw in fgetxattr(fd, name, raw.baseAddress, raw.count) }
            if got >= 0 { return value.prefix(got) }
            if errno != ERANGE { throw CacheFileSystemError(operation: "fgetxattr", path: path, code: errno) }
        }
    }

    /// A read-only descriptor of the file at `path` itself: a symlink is refused (ELOOP), a
    /// FIFO does not block the open.
    private func openForAttributes(_ path: String) throws(CacheFileSystemError) -> Int32 {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw CacheFileSystemError(operation: "open", path: path, code: errno) }
        return fd
    }
}
