import Foundation
import Testing
import TestSupport

/// `scripts/install`, run for real but never against this machine: `--dry-run` (which must
/// change nothing) and a staging root (`--destdir`, `DESTDIR=`) in a temporary folder,
/// with the binaries this test run was built with.
@Suite("scripts/install", .timeLimit(.minutes(2)))
struct InstallScriptTests {
    /// The repository: the folder above this file's that holds Package.swift.
    static let repository: URL = {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/", !FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
            dir.deleteLastPathComponent()
        }
        return dir
    }()

    static var binDir: String { URL(fileURLWithPath: CLIProcess.binary).deletingLastPathComponent().path }

    /// Runs the script and returns its exit status and stdout + stderr.
    static func install(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        let script = repository.appendingPathComponent("scripts/install").path
        let outcome = try await runTool(script, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                        mergeOutput: true, seconds: 100)
        return (outcome.status, outcome.stdout)
    }

    func stagingRoot() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("icli-install-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    func text(_ root: URL, _ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    func mode(_ root: URL, _ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(path).path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func aDryRunPrintsEveryActionAndChangesNothing() async throws {
        let dir = try stagingRoot()
        defer { try? FileManager.default.removeItem(at: dir) }
        let stage = dir.appendingPathComponent("stage")
        let result = try await Self.install(["--dry-run", "--destdir", stage.path, "--prefix", "/opt/ic"])
        #expect(result.status == 0, "\(result.output)")
        for line in ["swift build -c release --product imagecached",
                     "install -D -m 0755 .build/release/imagecached \(stage.path)/opt/ic/bin/imagecached",
                     "-> \(stage.path)/etc/systemd/system/imagecached.service",
                     "-> \(stage.path)/etc/systemd/user/imagecached.socket",
                     "\(stage.path)/etc/sysusers.d/imagecached.conf",
                     "install -D -m 0644 cache.conf \(stage.path)/etc/imagecached/cache.conf"] {
            #expect(result.output.contains(line), "\(line)")
        }
        #expect(!FileManager.default.fileExists(atPath: stage.path))
        // It ends by saying nothing was done, not with a real run's "staged"/"Installed.".
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("Dry run: nothing was installed (the lines above are what a run without --dry-run does)."),
                "\(result.output)")
        #expect(!result.output.contains("staged under") && !result.output.contains("Installed."))
    }

    @Test func aDryRunOnTheRealSystemNamesSysusersAndTouchesNothing() async throws {
        let result = try await Self.install(["--dry-run", "--bin-dir", "/nonexistent-bin"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("install -D -m 0755 /nonexistent-bin/imagecache /usr/local/bin/imagecache"))
        #expect(result.output.contains("systemd-sysusers /etc/sysusers.d/imagecached.conf"))
        #expect(result.output.contains("systemd-tmpfiles --create /etc/tmpfiles.d/imagecached.conf"))
        #expect(!result.output.contains("swift build"))
        #expect(result.output.contains("Dry run: nothing was installed") && !result.output.contains("Installed."), "\(result.output)")
    }

    @Test func snippetDirPutsTheSysusersAndTmpfilesEntriesWhereAPackageKeepsThem() async throws {
        let dir = try stagingRoot()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try await Self.install(["--destdir", dir.path, "--prefix", "/usr", "--bin-dir", Self.binDir,
                                             "--unitdir", "/usr/lib/systemd/system", "--snippet-dir", "/usr/lib"])
        #expect(result.status == 0, "\(result.output)")
        #expect(try text(dir, "usr/lib/sysusers.d/imagecached.conf").contains("u imagecached"))
        #expect(try text(dir, "usr/lib/tmpfiles.d/imagecached.conf").contains("d /srv/imagecached/downloads 0750 imagecached imagecached"))
        #expect(try text(dir, "usr/lib/systemd/system/imagecached.service").contains("ExecStart=/usr/bin/imagecached --config /etc/imagecached/cache.conf"))
        // Only the administrator's config is left in /etc.
        #expect(try FileManager.default.subpathsOfDirectory(atPath: dir.appendingPathComponent("etc").path).sorted() == ["imagecached", "imagecached/cache.conf"])
    }

    @Test func aStagingRootGetsTheWholeTreeWithUnitsPointingAtThePrefix() async throws {
        let dir = try stagingRoot()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try await Self.install(["--destdir", dir.path, "--prefix", "/opt/ic", "--bin-dir", Self.binDir])
        #expect(result.status == 0, "\(result.output)")
        for exe in ["imagecached", "imagecache"] {
            let installed = dir.appendingPathComponent("opt/ic/bin/\(exe)")
            #expect(try mode(dir, "opt/ic/bin/\(exe)") == 0o755)
            #expect(FileManager.default.contentsEqual(atPath: installed.path, andPath: Self.binDir + "/" + exe))
        }
        let system = try text(dir, "etc/systemd/system/imagecached.service")
        #expect(system.contains("ExecStart=/opt/ic/bin/imagecached --config /etc/imagecached/cache.conf"))
        #expect(system.contains("Documentation=man:imagecached(8) file:///opt/ic/share/doc/imagecached/protocol.md"))
        #expect(system.contains("User=imagecached"))
        #expect(try text(dir, "etc/systemd/system/imagecached.socket").contains("ListenStream=/run/imagecached/imagecached.sock"))
        #expect(try text(dir, "etc/systemd/user/imagecached.service").contains("ExecStart=/opt/ic/bin/imagecached\n"))
        #expect(try text(dir, "etc/systemd/user/imagecached.socket").contains("ListenStream=%t/imagecached.sock"))
        #expect(try text(dir, "etc/sysusers.d/imagecached.conf").contains("u imagecached"))
        #expect(try text(dir, "etc/imagecached/cache.conf") == String(contentsOf: Self.repository.appendingPathComponent("cache.conf"), encoding: .utf8))
        for doc in ["README.md", "protocol.md", "operating.md", "cache.conf"] {
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("opt/ic/share/doc/imagecached/\(doc)").path), "\(doc)")
        }
        for unit in ["etc/systemd/system/imagecached.service", "etc/sysusers.d/imagecached.conf", "etc/imagecached/cache.conf"] {
            #expect(try mode(dir, unit) == 0o644, "\(unit)")
        }
        // Nothing is run against the live system when staging.
        let actions = result.output.split(separator: "\n")
        #expect(!actions.contains { $0.hasPrefix("systemd-sysusers") || $0.hasPrefix("systemctl") })
        #expect(result.output.contains("staged under \(dir.path)"))
    }

    @Test func manPagesAndCompletionsAreGeneratedFromTheCommandsAndUnitdirMovesTheUnits() async throws {
        let dir = try stagingRoot()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try await Self.install(["--destdir", dir.path, "--prefix", "/opt/ic", "--bin-dir", Self.binDir,
                                             "--unitdir", "/usr/lib/systemd/system"])
        #expect(result.status == 0, "\(result.output)")
        let cli = try text(dir, "opt/ic/share/man/man1/imagecache.1")
        #expect(cli.hasPrefix(".TH IMAGECACHE 1 "), "\(cli.prefix(200))")
        for part in [".SH SYNOPSIS", ".SS imagecache search", "\\-\\-socket", ".SS imagecache download list", "IMAGECACHE_SOCKET"] {
            #expect(cli.contains(part), "\(part)")
        }
        #expect(!cli.contains("generate\\-manpage"), "the hidden command stays out of the page")
        let daemon = try text(dir, "opt/ic/share/man/man8/imagecached.8")
        #expect(daemon.hasPrefix(".TH IMAGECACHED 8 ") && daemon.contains("\\-\\-check\\-config"))
        #expect(try text(dir, "opt/ic/share/bash-completion/completions/imagecache").contains("_imagecache"))
        #expect(try text(dir, "opt/ic/share/zsh/site-functions/_imagecached").contains("#compdef imagecached"))
        #expect(try text(dir, "opt/ic/share/fish/vendor_completions.d/imagecache.fish").contains("complete -c 'imagecache'"))
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("usr/lib/systemd/system/imagecached.service").path))
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("usr/lib/systemd/user/imagecached.socket").path))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("etc/systemd").path))
        // man(1) reads the page without complaint.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") || FileManager.default.isExecutableFile(atPath: "/usr/bin/nroff") {
            let rendered = try await runCapturing("/bin/sh", ["-c", "nroff -man '\(dir.path)/opt/ic/share/man/man1/imagecache.1' 2>&1 >/dev/null"])
            #expect(rendered.output.isEmpty, "\(rendered.output)")
        }
    }

    @Test func aDryRunNamesEveryFileItWouldWriteAndUninstallRemovesThemAll() async throws {
        let dir = try stagingRoot()
        defer { try? FileManager.default.removeItem(at: dir) }
        let options = ["--destdir", dir.path, "--prefix", "/opt/ic", "--bin-dir", Self.binDir]
        let dry = try await Self.install(options + ["--dry-run"])
        #expect(dry.status == 0, "\(dry.output)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("opt").path), "a dry run wrote files")
        let installed = try await Self.install(options)
        #expect(installed.status == 0, "\(installed.output)")
        // Every file the install wrote was named by the dry run: it tells the truth.
        let written = try FileManager.default.subpathsOfDirectory(atPath: dir.path).filter { path in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: dir.path + "/" + path, isDirectory: &isFolder) && !isFolder.boolValue
        }
        #expect(written.count >= 16, "\(written)")
        for path in written { #expect(dry.output.contains(dir.path + "/" + path), "the dry run did not name \(path)") }
        let dryUninstall = try await Self.install(options + ["--uninstall", "--dry-run"])
        #expect(dryUninstall.status == 0)
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("opt/ic/bin/imagecache").path))
        let uninstalled = try await Self.install(options + ["--uninstall"])
        #expect(uninstalled.status == 0, "\(uninstalled.output)")
        let left = try FileManager.default.subpathsOfDirectory(atPath: dir.path).filter { path in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: dir.path + "/" + path, isDirectory: &isFolder) && !isFolder.boolValue
        }
        #expect(left == ["etc/imagecached/cache.conf"], "the administrator's config alone stays")
    }

    @Test func anExistingCacheConfIsKeptAndDESTDIRWorksLikeTheOption() async throws {
        let dir = try stagingRoot()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("etc/imagecached/cache.conf")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "# mine\n[network]\nallow_http = true\n".write(to: config, atomically: true, encoding: .utf8)
        let result = try await Self.install(["--bin-dir", Self.binDir], environment: ["DESTDIR": dir.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(try String(contentsOf: config, encoding: .utf8) == "# mine\n[network]\nallow_http = true\n")
        #expect(result.output.contains("keep \(config.path)"))
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("usr/local/bin/imagecached").path))
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("usr/local/share/doc/imagecached/cache.conf").path))
    }

    @Test func missingBinariesStopTheInstallBeforeAnythingIsWritten() async throws {
        let dir = try stagingRoot()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try await Self.install(["--destdir", dir.path, "--bin-dir", dir.appendingPathComponent("nothing").path])
        #expect(result.status == 1)
        #expect(result.output.contains("no executable"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test(arguments: [["--bogus"], ["--prefix", "relative/path", "--dry-run"]])
    func badOptionsAreUsageErrors(arguments: [String]) async throws {
        let result = try await Self.install(arguments)
        #expect(result.status == 64)
    }
}
