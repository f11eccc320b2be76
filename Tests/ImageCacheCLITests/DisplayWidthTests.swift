import Testing
@testable import ImageCacheCLI

@Suite("Display width and truncation", .timeLimit(.minutes(1)))
struct DisplayWidthTests {
    @Test func asciiIsOneColumnPerCharacter() {
        #expect(DisplayWidth.of("beach") == 5)
    }

    @Test func cjkAndEmojiTakeTwoColumns() {
        #expect(DisplayWidth.of("日本") == 4)
        #expect(DisplayWidth.of("🌅") == 2)
        #expect(DisplayWidth.of("❤️") == 2)
        #expect(DisplayWidth.of("👩‍👩‍👧") == 2)
    }

    @Test func combiningMarksAddNoColumn() {
        #expect(DisplayWidth.of("e\u{301}te\u{301}") == 3)
    }

    @Test func truncationEndsWithAnEllipsisWithinTheWidth() {
        let cut = DisplayWidth.truncate("A beautiful beach at sunset", to: 10)
        #expect(cut == "A beautif…")
        #expect(DisplayWidth.of(cut) == 10)
    }

    @Test func truncationNeverSplitsAWideCharacterOverTheLimit() {
        let cut = DisplayWidth.truncate("日本の海🌅とても美しい", to: 7)
        #expect(DisplayWidth.of(cut) <= 7)
        #expect(cut.hasSuffix("…"))
        #expect(cut == "日本の…")
    }

    @Test func truncationKeepsGraphemeClustersWhole() {
        let cut = DisplayWidth.truncate("👩‍👩‍👧👩‍👩‍👧👩‍👩‍👧", to: 5)
        #expect(cut == "👩‍👩‍👧👩‍👩‍👧…")
    }

    @Test func textThatFitsIsUnchangedButFlattened() {
        #expect(DisplayWidth.truncate("two\nlines", to: 20) == "two lines")
    }

    @Test func padFillsToExactWidth() {
        #expect(DisplayWidth.of(DisplayWidth.pad("日本", to: 7)) == 7)
        #expect(DisplayWidth.pad("42", to: 5, alignRight: true) == "   42")
    }
}
