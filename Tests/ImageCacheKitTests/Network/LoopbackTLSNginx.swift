import Foundation
import ImageCacheSupport
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real nginx (Debian's, installed by `scripts/install-deps`) serving files over TLS with
/// HTTP/2 on 127.0.0.1, with a self-signed certificate made by `openssl` for this run: the
/// only way to see what the engine does on a real HTTP/2 connection (the loopback simulator
/// speaks HTTP/1.1 only).
///
/// nginx writes its pid file only once its listening socket is open, so `start` waits for that
/// file to be written (inotify: an event, not a poll) before any request is sent. nginx runs in
/// the foreground as one process (`master_process off`), so it never changes user, as root on
/// CI or not.
///
/// The access log records, per request, nginx's connection serial number, the protocol, the
/// status and the bytes sent, so a test can see which requests shared a connection.
final class LoopbackTLSNginx: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case tool(String)
        var description: String { if case .tool(let why) = self { return why }; return "" }
    }

    /// One line of the access log.
    struct Entry: Sendable {
        var connection: Int
        var protocolName: String
        var status: Int
        var path: String
        var bytesSent: Int
    }

    let folder: String
    let port: Int
    /// The self-signed certificate: the engine's `ca_bundle`.
    let certificate: String
    private let pid: pid_t

    /// Starts nginx serving `files` (path → body); `/slow/…` paths are sent at `slowRate`
    /// bytes per second so a test can catch a transfer in the middle of its body.
    static func start(files: [String: [UInt8]], slowRate: Int = 16 << 10) throws -> LoopbackTLSNginx {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-h2-\(UUID().uuidString)").path
        let manager = FileManager.default
        for sub in ["www", "tmp", "logs"] {
            try manager.createDirectory(atPath: "\(folder)/\(sub)", withIntermediateDirectories: true)
        }
        for (path, body) in files {
            let file = "\(folder)/www\(path)"
            try manager.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(body).write(to: URL(fileURLWithPath: file))
        }
        let certificate = "\(folder)/cert.pem"
        let key = "\(folder)/key.pem"
        try run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                     "-nodes", "-keyout", key, "-out", certificate, "-days", "2",
                                     "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
        let port = try freeLoopbackPort()
        let config = """
            daemon off;
            master_process off;
            pid \(folder)/nginx.pid;
            error_log \(folder)/logs/error.log notice;
            events { worker_connections 256; }
            http {
                log_format conn '$connection $server_protocol $status $uri $body_bytes_sent';
                access_log \(folder)/logs/access.log conn;
                client_body_temp_path \(folder)/tmp/body;
                proxy_temp_path \(folder)/tmp/proxy;
                fastcgi_temp_path \(folder)/tmp/fastcgi;
                uwsgi_temp_path \(folder)/tmp/uwsgi;
                scgi_temp_path \(folder)/tmp/scgi;
                types { image/jpeg jpg; }
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(certificate);
                    ssl_certificate_key \(key);
                    root \(folder)/www;
                    location /slow/ { limit_rate \(slowRate); }
                }
            }
            """
        try config.write(toFile: "\(folder)/nginx.conf", atomically: true, encoding: .utf8)
        let watcher = inotify_init1(Int32(IN_CLOEXEC))
        guard watcher >= 0, inotify_add_watch(watcher, folder, UInt32(IN_CLOSE_WRITE)) >= 0 else {
            throw Failure.tool("inotify: errno \(errno)")
        }
        defer { close(watcher) }
        // ChildSpawn: nginx must not keep another test's descriptor open, and must hear SIGTERM.
        let pid = try ChildSpawn.start("/usr/sbin/nginx", arguments: ["-p", folder, "-c", "\(folder)/nginx.conf", "-e", "\(folder)/logs/error.log"],
                                       environment: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"],
                                       output: .file(path: "\(folder)/logs/stderr.log", append: false, mode: 0o644))
        let nginx = LoopbackTLSNginx(folder: folder, port: port, certificate: certificate, pid: pid)
        try nginx.waitUntilListening(watcher: watcher)
        return nginx
    }

    private init(folder: String, port: Int, certificate: String, pid: pid_t) {
        self.folder = folder
        self.port = port
        self.certificate = certificate
        self.pid = pid
    }

    func url(_ path: String) -> String { "https://127.0.0.1:\(port)\(path)" }

    /// Stops nginx (which writes out every log line) and returns the access log.
    func stop() -> [Entry] {
        kill(pid, SIGTERM)
        _ = ChildSpawn.waitForExit(pid)
        let text = (try? String(contentsOfFile: "\(folder)/logs/access.log", encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: folder)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 5, let connection = Int(fields[0]), let status = Int(fields[2]),
                  let sent = Int(fields[4]) else { return nil }
            return Entry(connection: connection, protocolName: fields[1], status: status, path: fields[3], bytesSent: sent)
        }
    }

    /// What nginx said on stderr and in its error log (for a failure message).
    var errorLog: String {
        ["logs/stderr.log", "logs/error.log"].compactMap {
            try? String(contentsOfFile: "\(folder)/\($0)", encoding: .utf8)
        }.joined(separator: "\n")
    }

    /// Returns once nginx has written its pid file (it opens its listening socket first), or
    /// throws with its error log when it exits or 30 s pass.
    private func waitUntilListening(watcher: Int32) throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let text = try? String(contentsOfFile: "\(folder)/nginx.pid", encoding: .utf8), text.hasSuffix("\n") { return }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw Failure.tool("nginx exited at start: \(errorLog)")
            }
            let left = deadline - .now
            guard left > .zero else {
                _ = stop()
                throw Failure.tool("nginx did not start within 30 s: \(errorLog)")
            }
            // Wakes on any file of the folder closed after writing (the pid file among them);
            // at most every 100 ms, to notice an nginx that exited without writing it.
            var poller = pollfd(fd: watcher, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 100) > 0 {
                _ = buffer.withUnsafeMutableBytes { read(watcher, $0.baseAddress, $0.count) }
            }
        }
    }

    // MARK: Processes and sockets

    /// Runs `tool` to its end (blocking: `start` runs off the concurrency pool); its stderr is
    /// the error's text when it fails.
    private static func run(_ tool: String, _ arguments: [String]) throws {
        let messages = NSTemporaryDirectory() + "nginx-tool-\(UUID().uuidString).log"
        defer { unlink(messages) }
        let pid: pid_t
        do {
            pid = try ChildSpawn.start(tool, arguments: arguments, environment: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"],
                                       stdin: .null, stdout: .discard, stderr: .file(path: messages, append: false, mode: 0o600))
        } catch {
            throw Failure.tool("cannot run \(tool) (scripts/install-deps installs it): \(error)")
        }
        guard ChildSpawn.waitForExit(pid) == 0 else {
            throw Failure.tool("\(tool) failed: \((try? String(contentsOfFile: messages, encoding: .utf8)) ?? "")")
        }
    }

    /// A port on 127.0.0.1 that was free a moment ago (the kernel's pick), for nginx to bind:
    /// a `RefusingPort`'s, released at once.
    private static func freeLoopbackPort() throws -> Int {
        try RefusingPort().port
    }
}
