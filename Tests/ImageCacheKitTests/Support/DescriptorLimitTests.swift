#if canImport(Glibc)
import Glibc
#endif
import ImageCacheKit
import Testing

/// The daemon raises its open-file soft limit to the hard one at start (`DescriptorLimit`).
@Suite("Open-file limit", .timeLimit(.minutes(1)))
struct DescriptorLimitTests {
    @Test("the soft limit is raised to the hard one, and reads back as such")
    func raisedToHard() throws {
        var before = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &before) == 0)
        let raised = try #require(DescriptorLimit.raiseToHardLimit())
        #expect(raised == Int(clamping: before.rlim_max))
        #expect(DescriptorLimit.soft == raised)
    }
}
