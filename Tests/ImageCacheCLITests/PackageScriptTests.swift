import Foundation
import ImageCacheProtocol
import Testing
import TestSupport

/// `scripts/package`'s refusals, run for real before anything is built or written, and the one
/// version it reads: the package is only as good as the programs in it, so a program that still
/// needs the Swift toolchain's libraries, or a version Debian would misread, stops it.
/// (The package itself is installed, upgraded and purged in a clean Debian by scripts/test-package.)
@Suite("scripts/package", .timeLimit(.minutes(2)))
struct PackageScriptTests {
    static func package(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let script = InstallScriptTests.repository.appendingPathComponent("scripts/package").path
        let outcome = try await runTool(script, arguments, mergeOutput: true, seconds: 100)
        return (outcome.status, outcome.stdout)
    }

    @Test func bothProgramsReportTheOneVersion() async throws {
        for exe in ["imagecache", "imagecached"] {
            let outcome = try await runTool(InstallScriptTests.binDir + "/" + exe, ["--version"], seconds: 30)
            #expect(outcome.status == 0)
            #expect(outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == ImageCacheVersion.current, "\(exe)")
        }
        // A Debian upstream version: starts with a digit, no '-' (that would start a revision).
        #expect(ImageCacheVersion.current.first?.isNumber == true && !ImageCacheVersion.current.contains("-"))
    }

    @Test func programsLinkedAgainstTheToolchainAreRefused() async throws {
        // The test build links the Swift runtime dynamically from the toolchain's folder: such a
        // program would not run on a machine without Swift.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("icli-package-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try await Self.package(["--bin-dir", InstallScriptTests.binDir, "--output", output.path])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("needs the Swift toolchain's libraries"), "\(result.output)")
        #expect(result.output.contains("libswiftCore"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: output.path), "nothing is written before the check")
    }

    @Test(arguments: [["--bogus"], ["--version-suffix", "-2"], ["--version-suffix", "a b"]])
    func badOptionsAreUsageErrors(arguments: [String]) async throws {
        let result = try await Self.package(arguments)
        #expect(result.status == 64, "\(result.output)")
    }
}
