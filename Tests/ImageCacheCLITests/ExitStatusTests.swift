import ArgumentParser
import ImageCacheClient
import ImageCacheProtocol
import Testing
@testable import ImageCacheCLI

@Suite("Exit status per error kind", .timeLimit(.minutes(1)))
struct ExitStatusTests {
    @Test func everyContractKindUsedByCommandsHasItsOwnCode() {
        let distinct: [ErrorKind] = [.queryTooShort, .providerUnavailable, .upstreamError, .rateLimited, .networkUnavailable,
                                     .notFound, .cancelled, .decodeFailed, .tooLarge, .forbidden, .timeout, .busy,
                                     .methodNotFound, .internal]
        let codes = distinct.map { ExitStatus(kind: $0).rawValue }
        #expect(Set(codes).count == distinct.count)
        #expect(!codes.contains(0) && !codes.contains(1) && !codes.contains(64) && !codes.contains(69))
    }

    @Test(arguments: [
        (ErrorKind.queryTooShort, 10), (.providerUnavailable, 11), (.upstreamError, 12), (.rateLimited, 13),
        (.networkUnavailable, 14), (.notFound, 15), (.cancelled, 16), (.decodeFailed, 17), (.tooLarge, 18),
        (.forbidden, 19), (.timeout, 20), (.busy, 21), (.methodNotFound, 22), (.invalidParams, 64),
        (.invalidRequest, 64), (.parseError, 64), (.internal, 70),
    ] as [(ErrorKind, Int32)])
    func kindMapsToTheDocumentedCode(kind: ErrorKind, code: Int32) {
        #expect(ExitStatus(error: RPCError(kind, "x")).rawValue == code)
    }

    @Test func clientFailuresHaveTheirOwnCodes() {
        #expect(ExitStatus(error: ImageCacheClientError.daemonNotRunning(socketPath: "/x", reason: "no such file")) == .daemonNotRunning)
        #expect(ExitStatus(error: ImageCacheClientError.permissionDenied(socketPath: "/x")) == .permissionDenied)
        #expect(ExitStatus(error: ImageCacheClientError.connectionClosed(socketPath: "/x", reason: "eof")) == .protocolError)
        #expect(ExitStatus(error: ImageCacheClientError.invalidResponse(method: "stats", detail: "?")) == .protocolError)
        #expect(ExitStatus(error: UsageError("bad")) == .usage)
        #expect(ExitStatus(error: CancellationError()) == .interrupted)
    }

    @Test func theHelpTableListsEveryCode() {
        let table = ExitStatus.helpTable
        for status in ExitStatus.allCases {
            #expect(table.contains("\(status.rawValue)  \(status.meaning)"))
        }
        #expect(ImageCacheRoot.helpMessage().contains("EXIT STATUS"))
        #expect(ImageCacheRoot.helpMessage().contains("query_too_short"))
    }

    @Test func usageMatchesArgumentParsersOwnCode() {
        #expect(ExitStatus.usage.rawValue == ExitCode.validationFailure.rawValue)
    }
}
