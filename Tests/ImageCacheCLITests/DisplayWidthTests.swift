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

    @Test func printableKeepsTextButNotControlsOrBidiOverrides() {
        #expect(DisplayWidth.printable("日本 🌅 👩‍👩‍👧 e\u{301}") == "日本 🌅 👩‍👩‍👧 e\u{301}")
        #expect(DisplayWidth.printable("a\r\nb\tc") == "a b c")
        #expect(DisplayWidth.printable("\u{1B}[31m\u{7F}\u{85}") == "\u{FFFD}[31m\u{FFFD} ")
        #expect(DisplayWidth.printable("x\u{202E}y\u{200F}z\u{061C}") == "x\u{FFFD}y\u{FFFD}z\u{FFFD}")
        #expect(DisplayWidth.truncate("\u{1B}]0;title\u{07}", to: 40) == "\u{FFFD}]0;title\u{FFFD}")
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
