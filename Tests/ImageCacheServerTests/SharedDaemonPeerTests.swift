import DaemonChild
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImageCacheServer
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// A daemon shared by several users (`socket_group`) keeps each to their own (docs/protocol.md,
/// "Shared daemons"): real users made for the test, each client a real process running as one
/// of them, against an in-process daemon running as root (so root and the daemon's uid are one
/// here; the user daemon's case, every peer of the daemon's uid, is the rest of the suite).
@Suite("Shared daemon: every user keeps to their own", .serialized, .timeLimit(.minutes(4)),
       .enabled(if: PeerAccounts.canRun, "needs root: it makes users and runs clients as them"))
struct SharedDaemonPeerTests {
    private static let body = SyntheticImages.jpeg(width: 320, height: 240, seed: 21)

    /// A daemon with `socket_group` and `admin_group` set, the accounts, a folder of each
    /// user's under the download root, and the root client, for `body`; all removed after.
    private static func withSharedDaemon(
        _ body: (DownloadFixture, PeerAccounts, SharedFolders, DownloadClient) async throws -> Void
    ) async throws {
        let accounts = try await PeerAccounts.make()
        let fixture = try await DownloadFixture.make()
        var daemon: SearchDaemon?
        var rootClient: DownloadClient?
        do {
            // Every user must reach the socket and the root (mkdtemp made the folder 0700).
            chmod(fixture.folder, 0o755)
            chmod(fixture.root, 0o755)
            let folders = try SharedFolders(root: fixture.root, accounts: accounts)
            var configuration = fixture.configuration()
            configuration.daemon.socketGroup = accounts.group
            configuration.daemon.adminGroup = accounts.adminGroup
            let started = try await SearchDaemon.start(configuration)
            daemon = started
            let client = try await DownloadClient.connect(started.socketPath)
            rootClient = client
            try await body(fixture, accounts, folders, client)
        } catch {
            await rootClient?.close()
            await daemon?.stop()
            await accounts.remove()
            await fixture.finish()
            throw error
        }
        await rootClient?.close()
        await daemon?.stop()
        await accounts.remove()
        await fixture.finish()
    }

    @Test("another user's job is invisible: list, status, watch and cancel answer as for a made-up id; no notification leaks")
    func jobsArePrivate() async throws {
        try await Self.withSharedDaemon { fixture, accounts, folders, root in
            let alice = try await accounts.connect(accounts.alice, to: fixture.socketPath)
            let bob = try await accounts.connect(accounts.bob, to: fixture.socketPath)
            // Bob is connected (and has spoken) before Alice's job exists.
            _ = try await bob.result("hello")
            fixture.images.serve("/held.jpg", body: Self.body, faults: [.held])
            let job = try await alice.download(["url": fixture.images.url("/held.jpg"), "directory": folders.alice])
            try await fixture.images.waitUntil { $0.requests("/held.jpg") >= 1 }

            let bobsList = try await bob.result("download.list")
            #expect((bobsList["jobs"] as? [[String: Any]])?.isEmpty == true)
            let alicesList = try await alice.result("download.list")
            #expect((alicesList["jobs"] as? [[String: Any]])?.map { $0["job"] as? String } == [job])
            let rootsList = try await root.result("download.list")
            #expect((rootsList["jobs"] as? [[String: Any]])?.contains { $0["job"] as? String == job } == true)

            let madeUp = "dl-00000000abcd"
            for method in ["download.status", "download.watch", "download.cancel"] {
                let theirs = try await bob.ask(method, ["job": job])
                let none = try await bob.ask(method, ["job": madeUp])
                let theirError = try #require(theirs["error"] as? [String: Any], "\(method) answered \(theirs)")
                let noneError = try #require(none["error"] as? [String: Any], "\(method) answered \(none)")
                #expect(theirError["code"] as? Int == 1006)
                #expect((theirError["data"] as? [String: Any])?["kind"] as? String == "not_found")
                // The very same answer, but for the id itself.
                let theirMessage = try #require(theirError["message"] as? String).replacingOccurrences(of: job, with: madeUp)
                #expect(theirMessage == noneError["message"] as? String)
                #expect(NSDictionary(dictionary: theirError["data"] as? [String: Any] ?? [:])
                    == NSDictionary(dictionary: noneError["data"] as? [String: Any] ?? [:]))
            }
            // Bob's cancel did nothing: the job runs on and finishes for Alice.
            let status = try await alice.result("download.status", ["job": job])
            #expect(status["state"] as? String == "running")
            fixture.images.release("/held.jpg")
            let (method, params) = try await alice.outcome(job: job)
            #expect(method == "download.finished")
            #expect(params["path"] as? String == folders.alice + "/held.jpg")
            #expect(fixture.contents(folders.alice + "/held.jpg") == Self.body)
            // Root sees it finished; Bob, asking after Alice heard the end, has heard nothing of it.
            let seen = try await root.result("download.status", ["job": job])
            #expect(seen["state"] as? String == "finished")
            _ = try await bob.result("hello")
            #expect(!bob.kept.contains { ($0["method"] as? String)?.hasPrefix("download.") == true })
            await alice.close()
            await bob.close()
        }
    }

    @Test("a download goes only where its user could write: not into another's folder, not through a symlink, not over another's file")
    func destinationsAreTheUsers() async throws {
        try await Self.withSharedDaemon { fixture, accounts, folders, _ in
            fixture.images.serve("/a.jpg", body: Self.body)
            let url = fixture.images.url("/a.jpg")
            let bob = try await accounts.connect(accounts.bob, to: fixture.socketPath)

            // Into Alice's folder.
            let intoAlices = try await bob.ask("download", ["url": url, "directory": folders.alice])
            try Self.expectForbidden(intoAlices, saying: "belongs to uid \(accounts.alice.uid)")
            // The root itself (root's folder), by naming no folder.
            let intoRoot = try await bob.ask("download", ["url": url])
            try Self.expectForbidden(intoRoot, saying: "belongs to uid 0")
            // Through a symbolic link of his own that points at Alice's folder.
            let link = folders.bob + "/to-alice"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: folders.alice)
            try accounts.give(link, to: accounts.bob, mode: 0)
            let throughLink = try await bob.ask("download", ["url": url, "directory": link])
            try Self.expectForbidden(throughLink, saying: "symbolic link")
            // A folder that does not exist yet: the daemon would make it as itself.
            let missing = try await bob.ask("download", ["url": url, "directory": folders.bob + "/new"])
            try Self.expectForbidden(missing, saying: "does not exist")
            // Over a file of Alice's that stands in Bob's (group-writable) folder.
            let alicesFile = folders.bob + "/shared.jpg"
            try Data("alice's".utf8).write(to: URL(fileURLWithPath: alicesFile))
            try accounts.give(alicesFile, to: accounts.alice, mode: 0o644)
            let overAlices = try await bob.ask("download", ["url": url, "directory": folders.bob,
                                                            "filename": "shared.jpg", "overwrite": true])
            try Self.expectForbidden(overAlices, saying: "belongs to uid \(accounts.alice.uid)")
            #expect(fixture.contents(alicesFile) == Array("alice's".utf8))
            // Over a symbolic link at the name.
            let namedLink = folders.bob + "/link.jpg"
            try FileManager.default.createSymbolicLink(atPath: namedLink, withDestinationPath: alicesFile)
            try accounts.give(namedLink, to: accounts.bob, mode: 0)
            let overLink = try await bob.ask("download", ["url": url, "directory": folders.bob,
                                                          "filename": "link.jpg", "overwrite": true])
            try Self.expectForbidden(overLink, saying: "is a symbolic link")
            // Nothing was fetched for any of them, and nothing was left behind.
            #expect(fixture.images.counters.requests("/a.jpg") == 0)
            #expect(fixture.files(in: folders.alice).isEmpty)
            #expect(fixture.files(in: folders.bob) == ["link.jpg", "shared.jpg", "to-alice"])

            // His own folder works; overwrite replaces the file the daemon saved for him (owned
            // by the daemon's uid, known by the job table), not a numbered copy beside it.
            let first = try await bob.download(["url": url, "directory": folders.bob, "filename": "mine.jpg"])
            #expect(try await bob.outcome(job: first).method == "download.finished")
            let again = try await bob.download(["url": url, "directory": folders.bob, "filename": "mine.jpg", "overwrite": true])
            let (method, params) = try await bob.outcome(job: again)
            #expect(method == "download.finished")
            #expect(params["path"] as? String == folders.bob + "/mine.jpg")
            #expect(!fixture.files(in: folders.bob).contains("mine (1).jpg"))
            // Alice may not overwrite what the daemon saved for Bob, even in a folder of hers.
            let alice = try await accounts.connect(accounts.alice, to: fixture.socketPath)
            let overBobs = try await alice.ask("download", ["url": url, "directory": folders.bob,
                                                            "filename": "mine.jpg", "overwrite": true])
            try Self.expectForbidden(overBobs, saying: "belongs to uid")
            await alice.close()
            await bob.close()
        }
    }

    @Test("emptying the cache needs root, the daemon's uid or admin_group; evicting a named image is open to all")
    func clearNeedsAdmin() async throws {
        try await Self.withSharedDaemon { fixture, accounts, _, root in
            let bob = try await accounts.connect(accounts.bob, to: fixture.socketPath)
            let admin = try await accounts.connect(accounts.admin, to: fixture.socketPath)
            for what in ["thumbnails", "searches", "all"] {
                let refused = try await bob.ask("cache.clear", ["what": what])
                try Self.expectForbidden(refused, saying: "admin_group \"\(accounts.adminGroup)\"")
                let allowed = try await admin.ask("cache.clear", ["what": what])
                #expect(allowed["result"] is [String: Any], "\(allowed)")
                let byRoot = try await root.ask("cache.clear", ["what": what])
                #expect(byRoot["result"] is [String: Any], "\(byRoot)")
            }
            let evict = try await bob.ask("cache.evict", ["url": fixture.images.url("/never.jpg")])
            #expect(evict["result"] is [String: Any], "\(evict)")
            // Searches stay shared: Bob's search is answered.
            let search = try await bob.ask("search", ["query": "mountain lake", "provider": "unsplash"])
            #expect(search["result"] is [String: Any], "\(search)")
            await bob.close()
            await admin.close()
        }
    }

    @Test("under a system unit's own user: its files are its own, yet a peer overwrites what it saved for that peer, and its uid sees all and may clear")
    func daemonAsItsOwnUser() async throws {
        let accounts = try await PeerAccounts.make()
        let fixture = try await DownloadFixture.make()
        var daemon: DaemonProcess?
        do {
            chmod(fixture.folder, 0o755)
            // The daemon checks at start that it may write in its download roots.
            try accounts.give(fixture.root, to: accounts.service, mode: 0o755)
            // The daemon's own folder (socket, cache, state): its user's, the group may enter.
            let home = fixture.folder + "/svc"
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
            try accounts.give(home, to: accounts.service, mode: 0o750)
            // Alice's folder: hers, and the group's to write in, so the daemon's user can save there.
            let alices = fixture.root + "/alice"
            try FileManager.default.createDirectory(atPath: alices, withIntermediateDirectories: false)
            try accounts.give(alices, to: accounts.alice, mode: 0o770)
            // The build folder may not be open to other users: the daemon runs from a copy.
            let binary = fixture.folder + "/imagecached"
            try FileManager.default.copyItem(atPath: DaemonProcess.executable.path, toPath: binary)
            let socket = home + "/d.sock"
            let config = home + "/cache.conf"
            try Data("""
                [daemon]
                socket = \(socket)
                socket_group = \(accounts.group)
                state_dir = \(home)/state
                [cache]
                cache_dir = \(home)/cache
                [network]
                allowed_hosts = 127.0.0.1
                allow_http = true
                [downloads]
                download_dir = \(fixture.root)
                """.utf8).write(to: URL(fileURLWithPath: config))
            try accounts.give(config, to: accounts.service, mode: 0o600)
            let started = try DaemonProcess(executable: URL(fileURLWithPath: "/usr/bin/setpriv"), arguments: [
                "--reuid=\(accounts.service.name)", "--regid=\(accounts.group)", "--init-groups", binary, "--config", config,
            ], environment: DaemonProcess.environment(home: home))
            daemon = started
            do {
                try await started.waitForLog("serving", timeout: 30)
            } catch {
                Issue.record("the daemon did not start: \(started.log.joined(separator: "\n"))")
                throw error
            }

            fixture.images.serve("/a.jpg", body: Self.body)
            let url = fixture.images.url("/a.jpg")
            let alice = try await accounts.connect(accounts.alice, to: socket)
            let first = try await alice.download(["url": url, "directory": alices, "filename": "view.jpg"])
            #expect(try await alice.outcome(job: first).method == "download.finished")
            let saved = alices + "/view.jpg"
            let owner = try FileManager.default.attributesOfItem(atPath: saved)[.ownerAccountID] as? NSNumber
            #expect(owner?.uint32Value == accounts.service.uid)
            // Not Alice's by st_uid, but saved for her: overwrite replaces it in place.
            let again = try await alice.download(["url": url, "directory": alices, "filename": "view.jpg", "overwrite": true])
            let (method, params) = try await alice.outcome(job: again)
            #expect(method == "download.finished")
            #expect(params["path"] as? String == saved)
            #expect(fixture.files(in: alices) == ["view.jpg"])

            // Bob sees none of it and may not clear; the daemon's own uid sees both jobs and may.
            let bob = try await accounts.connect(accounts.bob, to: socket)
            #expect((try await bob.result("download.list")["jobs"] as? [[String: Any]])?.isEmpty == true)
            try Self.expectForbidden(try await bob.ask("cache.clear", ["what": "all"]), saying: "uid \(accounts.service.uid)")
            let itself = try await accounts.connect(accounts.service, to: socket)
            let all = try await itself.result("download.list")["jobs"] as? [[String: Any]]
            #expect(Set(all?.compactMap { $0["job"] as? String } ?? []) == [first, again])
            #expect(try await itself.ask("cache.clear", ["what": "all"])["result"] is [String: Any])
            await alice.close()
            await bob.close()
            await itself.close()
        } catch {
            daemon?.kill()
            await accounts.remove()
            await fixture.finish()
            throw error
        }
        daemon?.signal(SIGTERM)
        _ = try? await daemon?.waitForExit()
        await accounts.remove()
        await fixture.finish()
    }

    private static func expectForbidden(_ answer: [String: Any], saying words: String,
                                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = try #require(answer["error"] as? [String: Any], "answered \(answer)", sourceLocation: sourceLocation)
        #expect(error["code"] as? Int == 1010, "\(error)", sourceLocation: sourceLocation)
        #expect((error["data"] as? [String: Any])?["kind"] as? String == "forbidden", sourceLocation: sourceLocation)
        #expect((error["message"] as? String)?.contains(words) == true, "\(error)", sourceLocation: sourceLocation)
    }
}

/// A folder of Alice's (0755) and one of Bob's (0775, the accounts' group may write in it)
/// under the download root.
struct SharedFolders {
    let alice: String
    let bob: String

    init(root: String, accounts: PeerAccounts) throws {
        alice = root + "/alice"
        bob = root + "/bob"
        for path in [alice, bob] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        try accounts.give(alice, to: accounts.alice, mode: 0o755)
        try accounts.give(bob, to: accounts.bob, mode: 0o775)
    }
}

extension DownloadFixture {
    /// Where `configuration()` puts the daemon's socket.
    var socketPath: String { folder + "/d.sock" }
}

/// The parts of a shared daemon that need no second user.
@Suite("Shared daemon: peer groups and admin_group", .timeLimit(.minutes(1)))
struct SharedDaemonSettingsTests {
    @Test("the kernel's zero-padded group list: the gids up to the last non-zero one; all zeros reads as none")
    func groupsFromPaddedList() {
        var raw = InlineArray<256, UInt32>(repeating: 0)
        #expect(PeerCredentials.groups(from: raw).isEmpty)
        raw[0] = 0
        raw[1] = 27
        raw[2] = 1000
        #expect(PeerCredentials.groups(from: raw) == [0, 27, 1000])
        raw[255] = 70000
        #expect(PeerCredentials.groups(from: raw).count == 256)
    }

    @Test("an unknown admin_group stops start-up with a message naming it")
    func unknownAdminGroup() async throws {
        try await DownloadFixture.with { fixture in
            var configuration = fixture.configuration()
            configuration.daemon.adminGroup = "no-such-group-imagecached"
            #expect {
                _ = try ImageCacheDaemon(configuration: configuration, logger: SearchDaemon.logger)
            } throws: { error in
                // A configuration error: the process exits 78 and systemd does not restart it in a loop.
                guard case DaemonStartError.unknownAdminGroup = error, (error as? DaemonStartError)?.isConfigurationError == true else {
                    return false
                }
                return "\(error)" == "admin_group \"no-such-group-imagecached\" is not a group on this system"
            }
        }
    }

    @Test("a reload naming an unknown admin_group fails and keeps the running configuration")
    func reloadWithUnknownAdminGroup() async throws {
        try await DownloadFixture.with { fixture in
            var bad = fixture.configuration()
            bad.daemon.adminGroup = "no-such-group-imagecached"
            let fresh = bad
            let daemon = try ImageCacheDaemon(configuration: fixture.configuration(), logger: SearchDaemon.logger,
                                              options: ImageCacheDaemon.Options(reload: { fresh }, shutdownGracePeriod: .seconds(5)))
            let listener = try await daemon.start()
            #expect(!daemon.reloadConfiguration())
            #expect(daemon.configuration.current.daemon.adminGroup == nil)
            await daemon.stop(listener: listener)
        }
    }
}
