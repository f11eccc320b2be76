import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing

/// The sealed memory files hot inline thumbnails are sent from: what goes in comes back,
/// nothing can change it afterwards, and past the descriptor budget none is made.
@Suite("Sealed memory files", .timeLimit(.minutes(1)))
struct SealedMemoryFileTests {
    @Test("holds exactly the bytes it was made from, sealed against writes and resizing")
    func sealed() throws {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let file = try #require(SealedMemoryFile.make(bytes))
        #expect(file.count == bytes.count)
        #expect(file.contents() == bytes)
        #expect(file.isSealed)
        // Neither the content nor the size can change, from this process or any other that
        // got the descriptor.
        let wrote = [UInt8(1)].withUnsafeBytes { pwrite(file.descriptor, $0.baseAddress, 1, 0) }
        let writeError = errno
        #expect(wrote == -1 && writeError == EPERM)
        #expect(ftruncate(file.descriptor, 10) == -1)
        #expect(file.contents() == bytes)
    }

    @Test("an empty file is a file too")
    func empty() throws {
        let file = try #require(SealedMemoryFile.make([UInt8]()))
        #expect(file.count == 0)
        #expect(file.contents().isEmpty)
    }

    @Test("past the descriptor budget none is made")
    func budgetSpent() throws {
        #expect(SealedMemoryFile.make([1, 2, 3], budget: 0) == nil)
        #expect(SealedMemoryFile.budget > 0)
        let file = try #require(SealedMemoryFile.make(Array("QUJD".utf8)), "the budget is not spent here")
        #expect(file.contents() == Array("QUJD".utf8))
    }

    /// System calls that record what was closed and fail at one step; the rest are Linux's.
    final class FailingCalls: Sendable {
        enum Step { case create, write, seal, none }
        let closed = LockedState<[CInt]>([])
        let made = LockedState<[CInt]>([])
        let calls: SealedMemoryFile.SystemCalls

        init(failing step: Step) {
            let linux = SealedMemoryFile.SystemCalls.linux
            let closed = closed, made = made
            calls = SealedMemoryFile.SystemCalls(
                create: {
                    guard step != .create else { errno = EMFILE; return -1 }
                    let descriptor = linux.create()
                    made.withLock { $0.append(descriptor) }
                    return descriptor
                },
                write: { descriptor, bytes in
                    guard step != .write else { errno = ENOSPC; return -1 }
                    return linux.write(descriptor, bytes)
                },
                seal: { descriptor in
                    guard step != .seal else { errno = EPERM; return -1 }
                    return linux.seal(descriptor)
                },
                close: { descriptor in
                    closed.withLock { $0.append(descriptor) }
                    linux.close(descriptor)
                })
        }
    }

    @Test("a failed memfd_create, write or seal makes no file, closes what it opened and gives the budget back",
          arguments: [FailingCalls.Step.create, .write, .seal])
    func failures(_ step: FailingCalls.Step) {
        let failing = FailingCalls(failing: step)
        let live = LockedState(0)
        #expect(SealedMemoryFile.make([1, 2, 3], budget: 1, live: live, calls: failing.calls) == nil)
        #expect(live.withLock { $0 } == 0)
        // Whatever was opened was closed, once; nothing that was not opened was closed.
        #expect(failing.closed.withLock { $0 } == failing.made.withLock { $0 })
        #expect(failing.made.withLock { $0 }.count == (step == .create ? 0 : 1))
        // The place in the budget is free again: the next file is made.
        let next = SealedMemoryFile.make([4, 5], budget: 1, live: live, calls: FailingCalls(failing: .none).calls)
        #expect(next?.contents() == [4, 5])
    }

    @Test("a file holds its place in the budget until it goes, then closes its descriptor")
    func budgetHeldUntilDeinit() throws {
        let calls = FailingCalls(failing: .none)
        let live = LockedState(0)
        var file = SealedMemoryFile.make([1], budget: 1, live: live, calls: calls.calls)
        #expect(file != nil)
        #expect(live.withLock { $0 } == 1)
        #expect(SealedMemoryFile.make([2], budget: 1, live: live, calls: calls.calls) == nil)
        let descriptor = try #require(file?.descriptor)
        file = nil
        #expect(live.withLock { $0 } == 0)
        #expect(calls.closed.withLock { $0 } == [descriptor])
    }
}
