#if canImport(Glibc)
import Glibc
#endif

/// A fuzz target: what libFuzzer calls with each input. It must be a thin call into the
/// project's own function (so a crash is the daemon's), plus the checks that make a wrong
/// answer a crash too (differential and round-trip properties), via `FuzzCheck.fail`.
struct FuzzTarget: Sendable {
    let name: String
    let summary: String
    let run: @Sendable (UnsafeRawBufferPointer) -> Void
}

/// Every target this binary holds; one is chosen per run by `IMAGECACHED_FUZZ_TARGET`.
enum FuzzTargets {
    static let all: [FuzzTarget] = [
        RequestLineTarget.target,
        JSONLineTarget.target,
        ParamsTarget.target,
        ConfigTarget.target,
        ImageHeaderTarget.target,
        ThumbnailTarget.target,
        ProvidersTarget.target,
        HeaderValuesTarget.target,
        FilenameTarget.target,
        StreamVerifyTarget.target,
        BlurHashTarget.target,
    ] + FormatTargets.targets
}

/// The target of this run, chosen once in `LLVMFuzzerInitialize`.
nonisolated(unsafe) private var selected: FuzzTarget?

/// libFuzzer's set-up hook: picks the target named by `IMAGECACHED_FUZZ_TARGET`; with none
/// or an unknown name, lists the targets and exits (status 2) before any input runs.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    let name = getenv("IMAGECACHED_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTargets.all.first(where: { $0.name == name }) else {
        var text = "set IMAGECACHED_FUZZ_TARGET to one of:\n"
        for target in FuzzTargets.all { text += "  \(target.name)\t\(target.summary)\n" }
        FuzzCheck.printError(text)
        exit(2)
    }
    selected = target
    return 0
}

/// libFuzzer's entry point: one input to the chosen target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selected?.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
