@testable import ImageCacheConfig
@testable import ImageCacheKit
import Testing

/// Every error names the file, the line, the key and its section, as `FILE:LINE: message`.
@Suite("cache.conf errors", .timeLimit(.minutes(1)))
struct ConfigErrorTests {
    @Test("an unknown key names file, line, key and section")
    func unknownKey() {
        #expect(parseError("[network]\n# comment\n\nx = 1\n") == "cache.conf:4: unknown key 'x' in [network]")
    }

    @Test("the error carries path, line, section and key as fields too")
    func errorFields() throws {
        #expect(throws: ConfigurationError(path: "cache.conf", line: 2, section: "cache", key: "nope",
                                           message: "unknown key 'nope' in [cache]")) {
            try parseConfig("[cache]\nnope = 1\n")
        }
    }

    @Test("an unknown section is refused")
    func unknownSection() {
        #expect(parseError("[cache]\n[unsplash]\naccess_key = k\n") == "cache.conf:2: unknown section [unsplash]")
    }

    @Test("a key before any section is refused")
    func keyOutsideSection() {
        #expect(parseError("# top\nlog_level = info\n")
            == "cache.conf:2: key 'log_level' is outside any section (put it under its [section])")
    }

    @Test("a duplicate key names both lines")
    func duplicateKey() {
        #expect(parseError("[cache]\ndisk_limit = 1GiB\ndisk_limit = 2GiB\n")
            == "cache.conf:3: duplicate key 'disk_limit' in [cache] (first set on line 2)")
    }

    @Test("a duplicate section is refused")
    func duplicateSection() {
        #expect(parseError("[cache]\n[network]\n[cache]\n") == "cache.conf:3: duplicate section [cache] (first on line 1)")
    }

    @Test("a line without '=' is refused")
    func missingEquals() {
        #expect(parseError("[cache]\nmemory_limit 64MiB\n") == "cache.conf:2: missing '=' after 'memory_limit' in [cache]")
    }

    @Test("an '=' only inside a comment does not count")
    func equalsInCommentDoesNotCount() {
        #expect(parseError("[cache]\nmemory_limit # = 64MiB\n") == "cache.conf:2: missing '=' after 'memory_limit' in [cache]")
    }

    @Test("a line that starts with '=' is refused")
    func missingKey() {
        #expect(parseError("[cache]\n = 5\n") == "cache.conf:2: missing key before '=' in [cache]")
    }

    @Test("a section name in the wrong case is an unknown section")
    func sectionNameIsCaseSensitive() {
        #expect(parseError("[Cache]\n") == "cache.conf:1: unknown section [Cache]")
    }

    @Test("a key name in the wrong case is an unknown key")
    func keyNameIsCaseSensitive() {
        #expect(parseError("[cache]\nMemory_Limit = 1\n") == "cache.conf:2: unknown key 'Memory_Limit' in [cache]")
    }

    @Test("a key name with spaces is refused")
    func badKeyName() {
        #expect(parseError("[cache]\nmemory limit = 1\n")
            == "cache.conf:2: bad key name 'memory limit' in [cache]: keys are letters, digits and '_'")
    }

    @Test("an unterminated section header is refused")
    func unterminatedSection() {
        #expect(parseError("[cache\n") == "cache.conf:1: unterminated section header '[cache': missing ']'")
    }

    @Test("text after a section header is refused")
    func textAfterSection() {
        #expect(parseError("[cache] extra\n") == "cache.conf:1: unexpected text 'extra' after the section header")
    }

    @Test("an empty or malformed section name is refused")
    func badSectionName() {
        #expect(parseError("[]\n") == "cache.conf:1: bad section name []")
        #expect(parseError("[my cache]\n") == "cache.conf:1: bad section name [my cache]")
        #expect(parseError("[cache/x]\n") == "cache.conf:1: bad section name [cache/x]")
    }

    @Test("an unterminated quote is refused")
    func unterminatedQuote() {
        #expect(parseError("[network]\nuser_agent = \"abc # not a comment\n")
            == "cache.conf:2: unterminated quoted string for 'user_agent' in [network]")
    }

    @Test("an unknown escape is refused")
    func unknownEscape() {
        #expect(parseError(#"[network]"# + "\n" + #"user_agent = "a\qb""#)
            == #"cache.conf:2: unknown escape '\q' for 'user_agent' in [network]: use \" \\ \n or \t"#)
    }

    @Test("text after a closing quote is refused")
    func textAfterQuote() {
        #expect(parseError("[network]\nuser_agent = \"a\" b\n")
            == "cache.conf:2: unexpected text after the closing quote for 'user_agent' in [network]")
    }

    @Test("a quote inside an unquoted value is refused")
    func quoteInBareValue() {
        #expect(parseError("[network]\nuser_agent = a \"b\"\n")
            == "cache.conf:2: unexpected '\"' inside an unquoted value for 'user_agent' in [network]: quote the whole value")
    }

    @Test("a missing value is refused for keys that need one")
    func missingValue() {
        #expect(parseError("[cache]\nmemory_limit =\n") == "cache.conf:2: missing value for 'memory_limit' in [cache]")
        #expect(parseError("[search]\ndefault_provider = \"\"\n") == "cache.conf:2: missing value for 'default_provider' in [search]")
    }

    @Test("a size that is not a number is refused")
    func badSize() {
        #expect(parseError("[cache]\nmemory_limit = lots\n")
            == "cache.conf:2: bad value 'lots' for 'memory_limit' in [cache]: expected a size such as 512KiB, 64MiB or 2GiB")
    }

    @Test("a fractional size is refused")
    func fractionalSize() {
        #expect(parseError("[cache]\nmemory_limit = 1.5GiB\n")
            == "cache.conf:2: bad value '1.5GiB' for 'memory_limit' in [cache]: expected a size such as 512KiB, 64MiB or 2GiB (whole numbers only)")
    }

    @Test("a size with an unknown or ambiguous unit is refused", arguments: ["MB", "kib", "GB", "M"])
    func badSizeUnit(unit: String) {
        #expect(parseError("[cache]\n\ndisk_limit = 2\(unit)\n")
            == "cache.conf:3: bad unit '\(unit)' for 'disk_limit' in [cache]: sizes take B, KiB, MiB, GiB or TiB (powers of 1024); a plain number is bytes")
    }

    @Test("a size too large for 64 bits is refused")
    func sizeOverflow() {
        #expect(parseError("[cache]\ndisk_limit = 99999999999TiB\n")
            == "cache.conf:2: out-of-range value '99999999999TiB' for 'disk_limit' in [cache]: too large")
        #expect(parseError("[cache]\ndisk_limit = 99999999999999999999\n")
            == "cache.conf:2: out-of-range value '99999999999999999999' for 'disk_limit' in [cache]: too large")
    }

    @Test("a duration without a unit is refused")
    func durationWithoutUnit() {
        #expect(parseError("[network]\nconnect_timeout = 30\n")
            == "cache.conf:2: bad value '30' for 'connect_timeout' in [network]: expected a duration with a unit, such as 250ms, 30s, 5m or 24h")
    }

    @Test("a duration with an unknown unit is refused")
    func badDurationUnit() {
        #expect(parseError("[network]\nconnect_timeout = 3d\n")
            == "cache.conf:2: bad unit 'd' for 'connect_timeout' in [network]: durations take ms, s, m or h")
    }

    @Test("a zero timeout is refused")
    func zeroTimeout() {
        #expect(parseError("[network]\nstall_timeout = 0s\n")
            == "cache.conf:2: out-of-range value '0s' for 'stall_timeout' in [network]: must be more than 0ms")
    }

    @Test("an integer with a unit or sign is refused")
    func badInteger() {
        #expect(parseError("[network]\nmax_connections = 4x\n")
            == "cache.conf:2: bad value '4x' for 'max_connections' in [network]: expected a whole number without a unit")
        #expect(parseError("[network]\nmax_connections = -4\n")
            == "cache.conf:2: bad value '-4' for 'max_connections' in [network]: expected a whole number")
        #expect(parseError("[network]\nmax_connections = 1__0\n")
            == "cache.conf:2: bad value '1__0' for 'max_connections' in [network]: expected a whole number")
    }

    @Test("thumbnail_quality must be 1 to 100", arguments: ["0", "101"])
    func thumbnailQualityRange(value: String) {
        #expect(parseError("[cache]\nthumbnail_quality = \(value)\n")
            == "cache.conf:2: out-of-range value '\(value)' for 'thumbnail_quality' in [cache]: must be between 1 and 100")
    }

    @Test("max_connections must be at least 1")
    func maxConnectionsRange() {
        #expect(parseError("[network]\nmax_connections = 0\n")
            == "cache.conf:2: out-of-range value '0' for 'max_connections' in [network]: must be between 1 and 1024")
    }

    @Test("max_image_pixels must be at least 1")
    func maxImagePixelsRange() {
        #expect(parseError("[network]\nmax_image_pixels = 0\n")
            == "cache.conf:2: out-of-range value '0' for 'max_image_pixels' in [network]: must be at least 1")
    }

    @Test("max_request_bytes must be at least 1KiB")
    func maxRequestBytesRange() {
        #expect(parseError("[daemon]\nmax_request_bytes = 100\n")
            == "cache.conf:2: out-of-range value '100' for 'max_request_bytes' in [daemon]: must be at least 1KiB")
    }

    @Test("a boolean other than true or false is refused", arguments: ["yes", "1", "True"])
    func badBoolean(value: String) {
        #expect(parseError("[network]\nallow_http = \(value)\n")
            == "cache.conf:2: bad value '\(value)' for 'allow_http' in [network]: expected true or false")
    }

    @Test("an unknown log level is refused")
    func badLogLevel() {
        #expect(parseError("[daemon]\nlog_level = verbose\n")
            == "cache.conf:2: bad value 'verbose' for 'log_level' in [daemon]: expected one of trace, debug, info, notice, warning, error, critical")
    }

    @Test("an unknown default provider is refused")
    func badDefaultProvider() {
        #expect(parseError("[search]\ndefault_provider = google\n")
            == "cache.conf:2: bad value 'google' for 'default_provider' in [search]: expected one of unsplash, flickr, pixabay")
    }

    @Test("a relative path is refused")
    func relativePath() {
        #expect(parseError("[cache]\ncache_dir = cache\n")
            == "cache.conf:2: bad value 'cache' for 'cache_dir' in [cache]: expected an absolute path (or one starting with ~/)")
    }

    @Test("a socket path longer than a Unix socket address allows is refused")
    func socketPathTooLong() {
        let path = "/" + String(repeating: "s", count: 107)
        #expect(parseError("[daemon]\nsocket = \(path)\n")
            == "cache.conf:2: out-of-range value '\(path)' for 'socket' in [daemon]: a Unix socket path is at most 107 bytes")
    }

    @Test("an api_url that is not an http(s) URL is refused")
    func badAPIURL() {
        #expect(parseError("[providers.flickr]\napi_url = ftp://example.com\n")
            == "cache.conf:2: bad value 'ftp://example.com' for 'api_url' in [providers.flickr]: expected a URL such as https://host/path (schemes: http, https)")
    }

    @Test("a proxy without a known scheme is refused")
    func badProxy() {
        #expect(parseError("[network]\nproxy = 127.0.0.1:3128\n")
            == "cache.conf:2: bad value '127.0.0.1:3128' for 'proxy' in [network]: expected a URL such as https://host/path (schemes: http, https, socks4, socks4a, socks5, socks5h)")
    }

    @Test("an allowed host with a port or scheme is refused", arguments: ["127.0.0.1:8080", "http://example.com"])
    func badAllowedHost(host: String) {
        #expect(parseError("[network]\nallowed_hosts = localhost, \(host)\n")
            == "cache.conf:2: bad value 'localhost, \(host)' for 'allowed_hosts' in [network]: expected host names or IP addresses without scheme, port or path")
    }

    @Test("an empty list entry is refused")
    func emptyListEntry() {
        #expect(parseError("[network]\nallowed_hosts = a,,b\n") == "cache.conf:2: empty entry in the list for 'allowed_hosts' in [network]")
        #expect(parseError("[network]\nallowed_hosts = a,\n") == "cache.conf:2: empty entry in the list for 'allowed_hosts' in [network]")
    }

    @Test("a list where one value is wanted is refused")
    func listForScalar() {
        #expect(parseError("[network]\nuser_agent = \"a\", \"b\"\n")
            == "cache.conf:2: expected one value for 'user_agent' in [network], found a list")
    }

    @Test("a bad group name is refused")
    func badGroupName() {
        #expect(parseError("[daemon]\nsocket_group = my group\n")
            == "cache.conf:2: bad value 'my group' for 'socket_group' in [daemon]: expected a group name or numeric group id")
    }

    @Test("a bad admin_group is refused as socket_group is")
    func badAdminGroupName() {
        #expect(parseError("[daemon]\nadmin_group = my group\n")
            == "cache.conf:2: bad value 'my group' for 'admin_group' in [daemon]: expected a group name or numeric group id")
    }

    @Test("an error about a secret never shows its value")
    func secretValueNeverShown() {
        let message = parseError("[providers.unsplash]\naccess_key = \"s3cret\", \"other\"\n")
        #expect(message == "cache.conf:2: expected one value for 'access_key' in [providers.unsplash], found a list")
        #expect(message?.contains("s3cret") == false)
    }

    @Test("the message uses the path it was given")
    func messageUsesGivenPath() {
        #expect(throws: ConfigurationError.self) {
            try CacheConfiguration.parse(text: "[x]\n", path: "/etc/imagecached/cache.conf", environment: [:])
        }
        do {
            _ = try CacheConfiguration.parse(text: "[x]\n", path: "/etc/imagecached/cache.conf", environment: [:])
        } catch {
            #expect("\(error)" == "/etc/imagecached/cache.conf:1: unknown section [x]")
        }
    }
}
