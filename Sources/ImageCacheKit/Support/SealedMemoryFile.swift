import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Bytes in an anonymous memory file (`memfd`) sealed against any change: what a socket can
/// send with `sendfile`, which hands the file's pages to the socket instead of copying them.
///
/// A hot inline thumbnail is the same 40 KB of base64 in every answer. Written from a buffer,
/// each answer copies those bytes twice (into the line, then into the socket's buffers);
/// sent from this file, the daemon copies neither: on a loopback socket the kernel's copy of
/// the 40 KB `write` alone was 16 % of the daemon's samples (docs/benchmarks.md). The seals (no write, no resize, no unsealing) are what make
/// that safe: a page the socket still holds can never change under the client, and a file
/// outlives its entry for as long as a write still references it (`OutboundLimiter` keeps
/// the object until the write completes).
///
/// Each file holds a descriptor, so files are counted against a budget (a quarter of the
/// process's descriptor limit): past it `make` returns nil and the caller keeps the bytes
/// in memory as before. Files live in memory like any other allocation (the kernel charges
/// them to the process's cgroup) but, never mapped, they do not show in its RSS.
public final class SealedMemoryFile: Sendable, Hashable {
    /// The open, sealed file.
    public let descriptor: CInt
    /// Its length in bytes.
    public let count: Int

    /// The budget count this file holds a place in, given back when it goes.
    private let live: LockedState<Int>
    private let calls: SystemCalls

    private init(descriptor: CInt, count: Int, live: LockedState<Int>, calls: SystemCalls) {
        self.descriptor = descriptor
        self.count = count
        self.live = live
        self.calls = calls
    }

    deinit {
        calls.close(descriptor)
        live.withLock { $0 -= 1 }
    }

    /// A sealed file holding `bytes`, or nil when none can be made (budget used up, no memfd
    /// support, out of memory): the caller then keeps the bytes as they are.
    public static func make(_ bytes: some Collection<UInt8>) -> SealedMemoryFile? {
        make(bytes, budget: budget)
    }

    /// `make` against a given budget and count of live files, through the given system calls
    /// (tests spend the budget, or make a call fail).
    static func make(_ bytes: some Collection<UInt8>, budget: Int, live: LockedState<Int> = SealedMemoryFile.live,
                     calls: SystemCalls = .linux) -> SealedMemoryFile? {
        let admitted = live.withLock { live -> Bool in
            guard live < budget else { return false }
            live += 1
            return true
        }
        guard admitted else { return nil }
        let descriptor = calls.create()
        if descriptor >= 0, write(bytes, to: descriptor, with: calls), calls.seal(descriptor) == 0 {
            return SealedMemoryFile(descriptor: descriptor, count: bytes.count, live: live, calls: calls)
        }
        if descriptor >= 0 { calls.close(descriptor) }
        live.withLock { $0 -= 1 }
        return nil
    }

    /// The system calls a file is made and closed with: Linux's, or a test's that fail.
    struct SystemCalls: Sendable {
        var create: @Sendable () -> CInt
        var write: @Sendable (CInt, UnsafeRawBufferPointer) -> Int
        var seal: @Sendable (CInt) -> CInt
        var close: @Sendable (CInt) -> Void

        static let linux = SystemCalls(
            create: { ic_memfd_create_sealable("imagecached-inline") },
            write: { descriptor, bytes in Glibc.write(descriptor, bytes.baseAddress, bytes.count) },
            seal: { ic_seal_immutable($0) },
            close: { _ = Glibc.close($0) })
    }

    /// The file's content, read back (for tests and checks; the hot path never reads it).
    public func contents() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + offset, count - offset, off_t(offset)) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            offset += got
        }
        return Array(bytes[..<offset])
    }

    /// Whether the file carries every seal `make` puts on it.
    package var isSealed: Bool {
        let seals = ic_get_seals(descriptor)
        let all = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE
        return seals >= 0 && seals & all == all
    }

    private static func write(_ bytes: some Collection<UInt8>, to descriptor: CInt, with calls: SystemCalls) -> Bool {
        bytes.withContiguousStorageIfAvailable { writeAll(descriptor, UnsafeRawBufferPointer($0), with: calls) }
            ?? Array(bytes).withUnsafeBytes { writeAll(descriptor, $0, with: calls) }
    }

    private static func writeAll(_ descriptor: CInt, _ bytes: UnsafeRawBufferPointer, with calls: SystemCalls) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let wrote = calls.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            if wrote < 0, errno == EINTR { continue }
            guard wrote > 0 else { return false }
            offset += wrote
        }
        return true
    }

    // MARK: The descriptor budget

    /// Files alive now.
    private static let live = LockedState(0)

    /// How many files may be alive at once: a quarter of the soft descriptor limit (read at
    /// first use, after the daemon raised it), so sockets, cache files and libcurl always keep
    /// the rest.
    static let budget = min(DescriptorLimit.soft ?? 1024, 1 << 20) / 4

    public static func == (lhs: SealedMemoryFile, rhs: SealedMemoryFile) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
