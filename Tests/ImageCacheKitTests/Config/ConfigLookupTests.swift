import Foundation
@testable import ImageCacheConfig
@testable import ImageCacheKit
import Testing

/// `load`: which file is read, where secrets come from, and what unset paths default to —
/// with real files in a temporary folder and a made-up environment.
@Suite("cache.conf look-up, secrets and defaults", .timeLimit(.minutes(1)))
struct ConfigLookupTests {
    let temp: TemporaryDirectory
    init() throws { temp = try TemporaryDirectory() }

    private var missingSystemFile: String { temp.path + "/etc/imagecached/cache.conf" }

    // MARK: Look-up order

    @Test("--config wins over the user's and the system's files")
    func explicitPathWins() throws {
        let explicit = try temp.write("explicit.conf", "[cache]\nthumbnail_size = 100\n")
        try temp.write("xdg/imagecached/cache.conf", "[cache]\nthumbnail_size = 200\n")
        let system = try temp.write("etc/imagecached/cache.conf", "[cache]\nthumbnail_size = 300\n")
        let config = try CacheConfiguration.load(explicitPath: explicit, environment: ["XDG_CONFIG_HOME": temp.path + "/xdg"],
                                                 systemConfigPath: system)
        #expect(config.cache.thumbnailSize == 100)
        #expect(config.sourcePath == explicit)
    }

    @Test("a missing --config file is an error, not a fall-back")
    func missingExplicitFileIsError() throws {
        try temp.write("xdg/imagecached/cache.conf", "[cache]\n")
        let missing = temp.path + "/nope.conf"
        #expect(throws: ConfigurationError(path: missing, line: nil, message: "cannot read: No such file or directory")) {
            try CacheConfiguration.load(explicitPath: missing, environment: ["XDG_CONFIG_HOME": temp.path + "/xdg"],
                                        systemConfigPath: missingSystemFile)
        }
    }

    @Test("$XDG_CONFIG_HOME/imagecached/cache.conf comes before the system file")
    func xdgConfigBeforeSystem() throws {
        let user = try temp.write("xdg/imagecached/cache.conf", "[cache]\nthumbnail_size = 200\n")
        let system = try temp.write("etc/imagecached/cache.conf", "[cache]\nthumbnail_size = 300\n")
        let config = try CacheConfiguration.load(explicitPath: nil, environment: ["XDG_CONFIG_HOME": temp.path + "/xdg"],
                                                 systemConfigPath: system)
        #expect(config.cache.thumbnailSize == 200)
        #expect(config.sourcePath == user)
    }

    @Test("without XDG_CONFIG_HOME the user's file is ~/.config/imagecached/cache.conf")
    func homeConfigWithoutXDG() throws {
        let user = try temp.write("home/.config/imagecached/cache.conf", "[cache]\nthumbnail_size = 210\n")
        let config = try CacheConfiguration.load(explicitPath: nil, environment: ["HOME": temp.path + "/home"],
                                                 systemConfigPath: missingSystemFile)
        #expect(config.cache.thumbnailSize == 210)
        #expect(config.sourcePath == user)
    }

    @Test("a relative XDG_CONFIG_HOME is ignored, as the XDG specification says")
    func relativeXDGConfigIgnored() {
        let paths = CacheConfiguration.searchPaths(explicitPath: nil, environment: ["XDG_CONFIG_HOME": "rel", "HOME": "/h"])
        #expect(paths == ["/h/.config/imagecached/cache.conf", "/etc/imagecached/cache.conf"])
    }

    @Test("the system file is read when the user has none")
    func systemFileWhenNoUserFile() throws {
        let system = try temp.write("etc/imagecached/cache.conf", "[cache]\nthumbnail_size = 300\n")
        let config = try CacheConfiguration.load(explicitPath: nil, environment: ["XDG_CONFIG_HOME": temp.path + "/xdg"],
                                                 systemConfigPath: system)
        #expect(config.cache.thumbnailSize == 300)
        #expect(config.sourcePath == system)
    }

    @Test("with no file anywhere the defaults apply")
    func defaultsWhenNoFile() throws {
        let environment = ["XDG_CONFIG_HOME": temp.path + "/xdg"]
        let config = try CacheConfiguration.load(explicitPath: nil, environment: environment, systemConfigPath: missingSystemFile)
        #expect(config == CacheConfiguration(environment: environment))
        #expect(config.sourcePath == nil)
    }

    @Test("a user file that exists but cannot be read stops the look-up", .enabled(if: getuid() != 0, "root reads any file"))
    func unreadableUserFileIsError() throws {
        let user = try temp.write("xdg/imagecached/cache.conf", "[cache]\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: user)
        let system = try temp.write("etc/imagecached/cache.conf", "[cache]\n")
        #expect(throws: ConfigurationError(path: user, line: nil, message: "cannot read: Permission denied")) {
            try CacheConfiguration.load(explicitPath: nil, environment: ["XDG_CONFIG_HOME": temp.path + "/xdg"],
                                        systemConfigPath: system)
        }
    }

    @Test("a folder where the file should be is an error naming it")
    func directoryIsError() throws {
        let folder = temp.path + "/xdg/imagecached/cache.conf"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        do {
            _ = try CacheConfiguration.load(explicitPath: nil, environment: ["XDG_CONFIG_HOME": temp.path + "/xdg"],
                                            systemConfigPath: missingSystemFile)
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".hasPrefix(folder + ": cannot read: "))
        }
    }

    @Test("a file that is not UTF-8 is an error naming it")
    func notUTF8IsError() throws {
        let path = temp.path + "/latin1.conf"
        try Data([0x5B, 0x63, 0x61, 0x63, 0x68, 0x65, 0x5D, 0x0A, 0x23, 0xE9, 0x0A]).write(to: URL(fileURLWithPath: path))
        #expect(throws: ConfigurationError(path: path, line: nil, message: "not UTF-8 text")) {
            try CacheConfiguration.load(explicitPath: path, environment: [:], systemConfigPath: missingSystemFile)
        }
    }

    @Test("a parse error in a looked-up file names that file")
    func parseErrorNamesLookedUpFile() throws {
        let user = try temp.write("xdg/imagecached/cache.conf", "[network]\nx = 1\n")
        #expect(throws: ConfigurationError(path: user, line: 2, section: "network", key: "x", message: "unknown key 'x' in [network]")) {
            try CacheConfiguration.load(explicitPath: nil, environment: ["XDG_CONFIG_HOME": temp.path + "/xdg"],
                                        systemConfigPath: missingSystemFile)
        }
    }

    // MARK: Secrets

    private func secretsFile() throws -> String {
        try temp.write("cache.conf", """
            [providers.unsplash]
            access_key = from-file-u
            [providers.flickr]
            api_key = from-file-f
            [providers.pixabay]
            api_key = from-file-p
            """)
    }

    @Test("a key in the environment wins over the credential and the file")
    func environmentSecretWins() throws {
        let file = try secretsFile()
        try temp.write("creds/UNSPLASH_ACCESS_KEY", "from-credential\n")
        let config = try CacheConfiguration.load(explicitPath: file, environment: [
            "UNSPLASH_ACCESS_KEY": "from-env", "CREDENTIALS_DIRECTORY": temp.path + "/creds",
        ])
        #expect(config.unsplash.apiKey == "from-env")
        #expect(config.unsplash.apiKeySource == .environment(variable: "UNSPLASH_ACCESS_KEY"))
    }

    @Test("a systemd credential wins over the file, its trailing newline trimmed")
    func credentialBeatsFile() throws {
        let file = try secretsFile()
        let credential = try temp.write("creds/FLICKR_API_KEY", "from-credential\r\n")
        let config = try CacheConfiguration.load(explicitPath: file, environment: ["CREDENTIALS_DIRECTORY": temp.path + "/creds"])
        #expect(config.flickr.apiKey == "from-credential")
        #expect(config.flickr.apiKeySource == .credential(path: credential))
        #expect(config.pixabay.apiKey == "from-file-p")
        #expect(config.pixabay.apiKeySource == .file(path: file, line: 6))
    }

    @Test("each provider's key has its own variable")
    func eachProviderHasItsVariable() throws {
        let config = try parseConfig("", environment: [
            "UNSPLASH_ACCESS_KEY": "u", "FLICKR_API_KEY": "f", "PIXABAY_API_KEY": "p",
        ])
        #expect(config.unsplash.apiKey == "u")
        #expect(config.flickr.apiKey == "f")
        #expect(config.pixabay.apiKey == "p")
        #expect(config.unsplash.isConfigured && config.flickr.isConfigured && config.pixabay.isConfigured)
    }

    @Test("an empty environment variable or credential does not hide the file's key")
    func emptySecretsFallThrough() throws {
        let file = try secretsFile()
        try temp.write("creds/PIXABAY_API_KEY", "\n")
        let config = try CacheConfiguration.load(explicitPath: file, environment: [
            "PIXABAY_API_KEY": "", "CREDENTIALS_DIRECTORY": temp.path + "/creds",
        ])
        #expect(config.pixabay.apiKey == "from-file-p")
    }

    @Test("secrets apply even when no configuration file exists")
    func secretsWithoutFile() throws {
        try temp.write("creds/UNSPLASH_ACCESS_KEY", "cred-only")
        let config = try CacheConfiguration.load(explicitPath: nil, environment: [
            "XDG_CONFIG_HOME": temp.path + "/xdg", "CREDENTIALS_DIRECTORY": temp.path + "/creds",
        ], systemConfigPath: missingSystemFile)
        #expect(config.unsplash.apiKey == "cred-only")
        #expect(!config.flickr.isConfigured)
    }

    @Test("an unreadable credential is an error naming it", .enabled(if: getuid() != 0, "root reads any file"))
    func unreadableCredentialIsError() throws {
        let credential = try temp.write("creds/FLICKR_API_KEY", "k")
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: credential)
        #expect(throws: ConfigurationError(path: credential, line: nil, message: "cannot read: Permission denied")) {
            try parseConfig("", environment: ["CREDENTIALS_DIRECTORY": temp.path + "/creds"])
        }
    }

    @Test("a credential that is a folder is an error naming it")
    func credentialFolderIsError() throws {
        let credential = temp.path + "/creds/FLICKR_API_KEY"
        try FileManager.default.createDirectory(atPath: credential, withIntermediateDirectories: true)
        do {
            _ = try parseConfig("", environment: ["CREDENTIALS_DIRECTORY": temp.path + "/creds"])
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".hasPrefix(credential + ": cannot read: "))
        }
    }

    // MARK: Defaults of unset paths

    @Test("under systemd the cache is $CACHE_DIRECTORY's first entry")
    func systemdCacheDirectory() {
        let config = CacheConfiguration(environment: [
            "CACHE_DIRECTORY": "/var/cache/imagecached:/var/cache/other", "XDG_CACHE_HOME": "/x", "HOME": "/h",
        ])
        #expect(config.resolvedCacheDirectory == "/var/cache/imagecached")
    }

    @Test("otherwise the cache is $XDG_CACHE_HOME/imagecached, else ~/.cache/imagecached")
    func xdgCacheDirectory() {
        #expect(CacheConfiguration(environment: ["XDG_CACHE_HOME": "/x", "HOME": "/h"]).resolvedCacheDirectory == "/x/imagecached")
        #expect(CacheConfiguration(environment: ["HOME": "/h"]).resolvedCacheDirectory == "/h/.cache/imagecached")
        #expect(CacheConfiguration(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/h"]).resolvedCacheDirectory
            == "/h/.cache/imagecached")
    }

    @Test("cache_dir in the file wins over every default")
    func fileCacheDirWins() throws {
        let config = try parseConfig("[cache]\ncache_dir = /srv/c\n", environment: ["CACHE_DIRECTORY": "/var/cache/imagecached"])
        #expect(config.resolvedCacheDirectory == "/srv/c")
    }

    @Test("the socket defaults to $XDG_RUNTIME_DIR/imagecached.sock, else /run/imagecached")
    func socketDefault() {
        #expect(CacheConfiguration(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]).resolvedSocketPath
            == "/run/user/1000/imagecached.sock")
        #expect(CacheConfiguration(environment: [:]).resolvedSocketPath == "/run/imagecached/imagecached.sock")
    }

    @Test("downloads default to $XDG_DOWNLOAD_DIR, else ~/Downloads")
    func downloadDefault() {
        #expect(CacheConfiguration(environment: ["XDG_DOWNLOAD_DIR": "/d", "HOME": "/h"]).resolvedDownloadRoots == ["/d"])
        #expect(CacheConfiguration(environment: ["HOME": "/h"]).resolvedDownloadRoots == ["/h/Downloads"])
    }

    @Test("without HOME the home directory comes from the user database")
    func homeFromUserDatabase() {
        let home = EnvironmentDefaults.homeDirectory(environment: [:])
        #expect(home.hasPrefix("/"))
        #expect(CacheConfiguration(environment: [:]).resolvedCacheDirectory == (home == "/" ? "" : home) + "/.cache/imagecached")
    }
}

/// `~/.config/user-dirs.dirs` (xdg-user-dirs) decides the default download folder when
/// `XDG_DOWNLOAD_DIR` is not in the environment.
@Suite("user-dirs.dirs", .timeLimit(.minutes(1)))
struct UserDirsTests {
    @Test("the forms xdg-user-dirs writes: $HOME/…, absolute, escaped quotes; others ignored")
    func parse() {
        let file = """
            # This file is written by xdg-user-dirs-update
            XDG_DESKTOP_DIR="$HOME/Desktop"
            XDG_DOWNLOAD_DIR="$HOME/T\u{E9}l\u{E9}chargements"
            """
        #expect(EnvironmentDefaults.parseUserDirs(file, key: "XDG_DOWNLOAD_DIR", home: "/h") == "/h/T\u{E9}l\u{E9}chargements")
        #expect(EnvironmentDefaults.parseUserDirs(#"XDG_DOWNLOAD_DIR="/data/My \"dl\"""#, key: "XDG_DOWNLOAD_DIR", home: "/h") == #"/data/My "dl""#)
        #expect(EnvironmentDefaults.parseUserDirs(#"XDG_DOWNLOAD_DIR="$HOME""#, key: "XDG_DOWNLOAD_DIR", home: "/h") == "/h")
        #expect(EnvironmentDefaults.parseUserDirs(#"XDG_DOWNLOAD_DIR="relative/dl""#, key: "XDG_DOWNLOAD_DIR", home: "/h") == nil)
        #expect(EnvironmentDefaults.parseUserDirs(#"XDG_DOWNLOAD_DIR="/unterminated"#, key: "XDG_DOWNLOAD_DIR", home: "/h") == nil)
        #expect(EnvironmentDefaults.parseUserDirs("XDG_MUSIC_DIR=\"$HOME/Music\"", key: "XDG_DOWNLOAD_DIR", home: "/h") == nil)
    }

    @Test("the default download root follows the user's user-dirs.dirs; the environment wins over it")
    func defaultFollowsFile() throws {
        let temp = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: temp.path + "/.config", withIntermediateDirectories: true)
        _ = try temp.write(".config/user-dirs.dirs", "XDG_DOWNLOAD_DIR=\"$HOME/Hämtningar\"\n")
        #expect(CacheConfiguration(environment: ["HOME": temp.path]).resolvedDownloadRoots == [temp.path + "/Hämtningar"])
        #expect(CacheConfiguration(environment: ["HOME": temp.path, "XDG_DOWNLOAD_DIR": "/d"]).resolvedDownloadRoots == ["/d"])
        // XDG_CONFIG_HOME moves the file too.
        #expect(CacheConfiguration(environment: ["HOME": temp.path, "XDG_CONFIG_HOME": temp.path + "/elsewhere"]).resolvedDownloadRoots
            == [temp.path + "/Downloads"])
    }
}
