import ArgumentParser
import Foundation
import ImageCacheKit
#if canImport(Glibc)
import Glibc
#endif

/// `imagecache-bench shaping-proxy`: a TCP proxy on 127.0.0.1 that makes loopback look like a
/// real link — a round-trip time and a bandwidth cap per connection — for the fetch benchmark's
/// shaped repeat (the kernel here has no netem). Every client connection gets its own upstream
/// connection and two `ShapingRelay`s. Prints the port it listens on, then runs until killed.
struct ShapingProxy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shaping-proxy",
        abstract: "A latency and bandwidth shaping TCP proxy for the fetch benchmark (runs until killed).",
        discussion: """
            Example: imagecache-bench shaping-proxy --upstream-port 8080 --rtt-ms 20 --kib-per-second 2048
            prints the port to connect to; each connection then sees +20 ms round-trip (and one more
            round-trip before its first byte, as a TCP handshake) and at most 2 MiB/s each way.
            """
    )

    @Option(help: "The upstream port.")
    var upstreamPort: Int

    @Option(help: "The upstream IPv4 address (another network namespace's end of a veth, for the download benchmark's shaped link).")
    var upstreamHost = "127.0.0.1"

    @Option(help: "Round-trip time added per connection, in milliseconds (half each way).")
    var rttMs = 20

    @Option(help: "Bandwidth per connection and direction, in KiB/s.")
    var kibPerSecond = 2048

    func run() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 1024) == 0 else { throw ValidationError("cannot listen: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        // The port, written straight to the descriptor: the script waits for this line.
        FileHandle.standardOutput.write(Data("\(UInt16(bigEndian: address.sin_port))\n".utf8))
        let oneWay = Duration.microseconds(rttMs * 500)
        let rate = Double(kibPerSecond) * 1024
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { continue }
            let accepted = ContinuousClock.now
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var target = Self.loopback(port: upstreamPort)
            target.sin_addr.s_addr = inet_addr(upstreamHost)
            let connected = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(client)
                close(upstream)
                continue
            }
            for fd in [client, upstream] { setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) }
            // Both descriptors are closed once both directions are done.
            let remaining = LockedState(2)
            let done: @Sendable () -> Void = {
                if remaining.withLock({ $0 -= 1; return $0 }) == 0 {
                    close(client)
                    close(upstream)
                }
            }
            // The request's first byte waits out a handshake round-trip, then half a round-trip.
            ShapingRelay(from: client, to: upstream, delay: oneWay, bytesPerSecond: rate,
                         notBefore: accepted + .microseconds(rttMs * 1000), finished: done).start()
            ShapingRelay(from: upstream, to: client, delay: oneWay, bytesPerSecond: rate,
                         notBefore: accepted, finished: done).start()
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
