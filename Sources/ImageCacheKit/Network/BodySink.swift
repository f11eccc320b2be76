#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a body's bytes go while they arrive: memory up to a small bound, then a file, so a
/// 40 MB photo costs a file, not 40 MB of RAM per transfer (docs/protocol.md, "Limits"). The
/// file is one of the engine's reusable spill files (`SpillFiles`), which its consumer gives
/// back. Confined to the curl thread, like the transfer that owns it.
final class BodySink {
    /// The body while in memory (empty once spilled).
    private var buffer: [UInt8] = []
    /// The open file once spilled or when resuming; -1 while in memory.
    private var fd: Int32 = -1
    private var path: String?
    private let memoryLimit: Int
    /// Where a body past `memoryLimit` goes; nil for a caller's partial-download file, which
    /// is kept on failure (it can be resumed later), where a spill file goes back to the pool.
    private let spillFiles: SpillFiles?
    private(set) var size = 0
    private(set) var failure: String?
    /// The `errno` of the failure (0 when none), for its error kind (`StorageFailure`).
    private(set) var failureCode: Int32 = 0

    /// A sink that starts in memory and spills to one of `spillFiles` past `memoryLimit`.
    init(memoryLimit: Int, spillFiles: SpillFiles) {
        self.memoryLimit = memoryLimit
        self.spillFiles = spillFiles
    }

    /// A sink that appends to an existing partial body (a resumed download), opened by the
    /// resume's own opener: for a download job, beneath its checked folder with `O_NOFOLLOW`,
    /// never created here and never through a symlink. nil (with `errno` set) when the opener
    /// refused or failed.
    init?(appendingTo resume: TransferRequest.Resume) {
        let fd = resume.open()
        guard fd >= 0 else {
            errno = -fd
            return nil
        }
        let end = lseek(fd, 0, SEEK_END)
        guard end >= 0 else {
            let code = errno
            close(fd)
            errno = code
            return nil
        }
        self.fd = fd
        self.path = resume.path
        size = Int(end)
        memoryLimit = 0
        spillFiles = nil
    }

    /// Prepares for a body of known length: one allocation when it fits in memory (no
    /// regrowth copies), else the file at once, so a large body is written there as it arrives
    /// instead of first filling (and regrowing) a buffer up to the bound and copying it out.
    /// False (with `failure` set) when the file cannot be created.
    func reserve(_ total: Int) -> Bool {
        guard fd < 0 else { return true }
        if total <= memoryLimit {
            if total > buffer.capacity { buffer.reserveCapacity(total) }
            return true
        }
        return spill()
    }

    /// Appends bytes; false (with `failure` set) when the disk refused them.
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if fd < 0 {
            if buffer.count + bytes.count <= memoryLimit {
                buffer.append(contentsOf: bytes)
                size += bytes.count
                return true
            }
            guard spill() else { return false }
        }
        guard writeAll(fd, bytes) else { return false }
        size += bytes.count
        return true
    }

    /// Empties the sink (the server answered 200 to a range request: the whole body follows).
    func restart() -> Bool {
        if fd >= 0 {
            guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
                fail("cannot truncate the body file")
                return false
            }
        } else {
            buffer.removeAll(keepingCapacity: true)
        }
        size = 0
        return true
    }

    /// The complete body; the sink is done after this. A spill file is its pool's again once
    /// the body's consumer gives it back (`TransferEngine.release`).
    func finish() -> TransferBody {
        if fd >= 0, let path {
            close(fd)
            fd = -1
            return .file(path: path, size: size)
        }
        defer { buffer = [] }
        return .memory(buffer)
    }

    /// Drops the body: a spill file goes back to its pool; a caller's file is closed and kept.
    func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
            if let spillFiles, let path { spillFiles.giveBack(path) }
        }
        buffer = []
        size = 0
    }

    /// Moves the in-memory bytes to a spill file and continues there.
    private func spill() -> Bool {
        guard let spillFiles, let file = spillFiles.take() else {
            fail("cannot create a body file in \(spillFiles?.directory ?? "no folder")")
            return false
        }
        guard buffer.withUnsafeBytes({ writeAll(file.fd, $0) }) else {
            close(file.fd)
            spillFiles.giveBack(file.path)
            return false
        }
        fd = file.fd
        path = file.path
        buffer = []
        return true
    }

    /// Records a failed system call (its `errno` is read at once, before anything resets it).
    private func fail(_ what: String) {
        failureCode = errno
        failure = "\(what) (errno \(failureCode))"
    }

    private func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                fail("cannot write the body file")
                return false
            }
            offset += n
        }
        return true
    }
}
