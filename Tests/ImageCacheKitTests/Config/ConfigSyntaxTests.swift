@testable import ImageCacheConfig
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing

@Suite("cache.conf syntax", .timeLimit(.minutes(1)))
struct ConfigSyntaxTests {
    @Test("an empty file gives the defaults")
    func emptyFileGivesDefaults() throws {
        var expected = CacheConfiguration(environment: testEnvironment)
        expected.sourcePath = "cache.conf"
        #expect(try parseConfig("") == expected)
    }

    @Test("keys apply to their section and keep every other key's default")
    func keysApplyToTheirSection() throws {
        let config = try parseConfig("""
            [cache]
            thumbnail_size = 512
            [network]
            max_connections = 4
            """)
        #expect(config.cache.thumbnailSize == 512)
        #expect(config.network.maxConnections == 4)
        #expect(config.cache.memoryLimit == CacheConfiguration().cache.memoryLimit)
    }

    @Test("comment lines, blank lines and indentation are ignored")
    func commentsAndBlankLinesIgnored() throws {
        let config = try parseConfig("""
            # a comment
               # an indented comment

            \t[cache]   # after a section
              thumbnail_size=300
            """)
        #expect(config.cache.thumbnailSize == 300)
    }

    @Test("a trailing comment ends the value")
    func trailingCommentEndsValue() throws {
        let config = try parseConfig("[network]\nuser_agent = my app/1.0   # the agent\n")
        #expect(config.network.userAgent == "my app/1.0")
    }

    @Test("a '#' inside a quoted string is part of the value")
    func hashInsideQuotesIsKept() throws {
        let config = try parseConfig("[network]\nuser_agent = \"app #1\" # comment\n")
        #expect(config.network.userAgent == "app #1")
    }

    @Test("quoted strings keep spaces and understand escapes")
    func quotedStringEscapes() throws {
        let config = try parseConfig(#"""
            [network]
            user_agent = "  a \"b\" c\\d\te\nf  "
            """#)
        #expect(config.network.userAgent == "  a \"b\" c\\d\te\nf  ")
    }

    @Test("an unquoted string keeps its inner commas and spaces")
    func unquotedStringKeepsCommas() throws {
        let config = try parseConfig("[network]\nuser_agent = app/1.0 (Linux, x86_64)\n")
        #expect(config.network.userAgent == "app/1.0 (Linux, x86_64)")
    }

    @Test("only the first '=' separates key and value")
    func laterEqualsBelongToValue() throws {
        let config = try parseConfig("[providers.unsplash]\napi_url = http://127.0.0.1:1/api?a=b\n")
        #expect(config.unsplash.apiURL == "http://127.0.0.1:1/api?a=b")
    }

    @Test("CRLF line endings and a byte-order mark are accepted, line numbers stay right")
    func crlfAndBOM() throws {
        let config = try parseConfig("\u{FEFF}[cache]\r\nthumbnail_size = 128\r\n")
        #expect(config.cache.thumbnailSize == 128)
        #expect(parseError("[cache]\r\n\r\nnope = 1\r\n") == "cache.conf:3: unknown key 'nope' in [cache]")
    }

    @Test("spaces inside the section brackets are ignored")
    func sectionNameTrimmed() throws {
        let config = try parseConfig("[ providers.flickr ]\napi_url = http://127.0.0.1:8080/rest\n")
        #expect(config.flickr.apiURL == "http://127.0.0.1:8080/rest")
    }

    @Test("an empty value leaves an optional key unset")
    func emptyValueUnsetsOptionalKey() throws {
        let config = try parseConfig("[daemon]\nsocket =\nsocket_group = \"\"\n[network]\nproxy = # none\n")
        #expect(config.daemon.socket == nil)
        #expect(config.daemon.socketGroup == nil)
        #expect(config.network.proxy == nil)
    }

    @Test("an empty user_agent means the built-in one")
    func emptyUserAgentIsDefault() throws {
        let config = try parseConfig("[network]\nuser_agent =\n")
        #expect(config.network.userAgent == "imagecached/\(ImageCacheVersion.current)")
    }

    @Test("sourcePath records the file's name")
    func sourcePathRecorded() throws {
        #expect(try parseConfig("").sourcePath == "cache.conf")
    }
}
