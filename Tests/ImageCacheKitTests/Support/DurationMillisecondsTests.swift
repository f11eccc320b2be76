import ImageCacheKit
import Testing

@Suite("Duration.wholeMilliseconds", .timeLimit(.minutes(1)))
struct DurationMillisecondsTests {
    @Test("truncates to whole milliseconds and saturates instead of trapping")
    func saturates() {
        #expect(Duration.milliseconds(1234).wholeMilliseconds == 1234)
        #expect((Duration.microseconds(1999)).wholeMilliseconds == 1)
        #expect(Duration.seconds(Int64.max).wholeMilliseconds == .max)
        #expect(Duration.seconds(Int64.min).wholeMilliseconds == .min)
    }
}
