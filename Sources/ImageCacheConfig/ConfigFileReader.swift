#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a whole small text file with POSIX calls, so a failure says exactly why
/// (`No such file or directory`, `Permission denied`, `Is a directory`) and a missing file
/// can be told apart from an unreadable one: the look-up skips the first and stops on the second.
enum ConfigFileReader {
    /// Why a file could not be read.
    enum Failure: Error, Equatable {
        case missing
        case unreadable(String)
        case notUTF8
    }

    /// The file's text; a missing file (ENOENT, or a missing directory on the way) is `.missing`.
    static func contents(of path: String) throws(Failure) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .missing }
            throw .unreadable(String(cString: strerror(code)))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                throw .unreadable(String(cString: strerror(code)))
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > 16 << 20 { throw .unreadable("larger than 16 MiB") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        return text
    }

    /// The error a failure becomes, naming the file.
    static func error(_ failure: Failure, path: String) -> ConfigurationError {
        switch failure {
        case .missing: ConfigurationError(path: path, line: nil, message: "cannot read: No such file or directory")
        case .unreadable(let reason): ConfigurationError(path: path, line: nil, message: "cannot read: \(reason)")
        case .notUTF8: ConfigurationError(path: path, line: nil, message: "not UTF-8 text")
        }
    }
}
