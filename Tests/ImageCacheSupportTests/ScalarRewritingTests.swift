import ImageCacheSupport
import Testing

@Suite("String.rewritingScalars: the one loop behind the escapers", .timeLimit(.minutes(1)))
struct ScalarRewritingTests {
    @Test("each scalar is replaced, dropped (an empty replacement) or kept (nil), in order")
    func rewrites() {
        let out = "a<b\u{0}é🙂".rewritingScalars { scalar in
            switch scalar {
            case "<": return "&lt;"
            case "\u{0}": return ""
            default: return nil
            }
        }
        #expect(out == "a&lt;bé🙂")
    }

    @Test("combining marks are scalars of their own: a rewrite sees each")
    func combining() {
        let decomposed = "e\u{301}"
        #expect(decomposed.rewritingScalars { $0 == "\u{301}" ? "'" : nil } == "e'")
        #expect("".rewritingScalars { _ in "x" } == "")
    }
}
