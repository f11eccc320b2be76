// swift-tools-version: 6.1
// imagecached — a photo-search and thumbnail-cache daemon for Linux.
//
// Layers (imports point down only):
//   imagecache (CLI) → ImageCacheGallery (+ HTTPServing, NIOWebSocket) → ImageCacheClient → ImageCacheProtocol
//                    → ImageCacheConfig (the socket the daemon would use, from cache.conf)
//                    → DaemonChild (demo: a real imagecached and imagecache-simulator as children) → ImageCacheClient, ImageCacheSupport
//   imagecache-simulator (the demo's provider simulator, a separate program, so imagecache links no codec)
//                    → ProviderSimulator → HTTPServing, ImageCacheSupport, ImageCacheProtocol, CTurboJPEG, CPNG, CWebP, CAVIF
//   imagecached      → ImageCacheServer (+ swift-prometheus, HTTPServing) → ImageCacheKit (+ swift-metrics API) → ImageCacheConfig, ImageCacheProtocol, ImageCacheSupport, CCurl, CTurboJPEG, CJPEGWarnings, CPNG, CPNGReader, COpenSSLCrypto, CLinux, CLCMS2, CWebP, CAVIF, CGIF
//   ImageCacheConfig (cache.conf: its format, key table, readers, defaults) → ImageCacheProtocol, swift-log
//   LineFraming (NDJSON lines, NIOCore only) ← ImageCacheServer, ImageCacheClient, ImageCacheGallery
//   HTTPServing (one HTTP/1.1 server: bind, pipeline, body limit, response writer, shutdown, an upgrade hook; NIO only) ← ImageCacheServer, ProviderSimulator, ImageCacheGallery
//   ImageCacheSupport (locks, observed values, shared outcomes, demand groups, task tables, ChildSpawn): no C library, no NIO
// Access: what only this package's targets use is `package`; `public` is what the Benchmarks package (outside) needs (docs/architecture.md).
// The benchmark runner is a separate package in Benchmarks/ so that it never slows the main build.
import PackageDescription

let package = Package(
    name: "imagecached",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "imagecached", targets: ["imagecached"]),
        .executable(name: "imagecache", targets: ["imagecache"]),
        .executable(name: "imagecache-simulator", targets: ["imagecache-simulator"]),
        .library(name: "ImageCacheKit", targets: ["ImageCacheKit"]),
        .library(name: "ImageCacheConfig", targets: ["ImageCacheConfig"]),
        .library(name: "ImageCacheProtocol", targets: ["ImageCacheProtocol"]),
        .library(name: "ImageCacheServer", targets: ["ImageCacheServer"]),
        .library(name: "ImageCacheClient", targets: ["ImageCacheClient"]),
        .library(name: "ImageCacheGallery", targets: ["ImageCacheGallery"]),
        .library(name: "ProviderSimulator", targets: ["ProviderSimulator"]),
        .library(name: "DaemonChild", targets: ["DaemonChild"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        // MARK: C libraries (module maps and thin shims only; all policy lives in Swift)
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        .systemLibrary(
            name: "CPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSLCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(name: "CLinux"),
        // LittleCMS 2: embedded ICC profiles and PNG cHRM/gAMA converted to sRGB.
        .systemLibrary(
            name: "CLCMS2",
            pkgConfig: "lcms2",
            providers: [.apt(["liblcms2-dev"])]
        ),
        // Formats beyond JPEG and PNG: WebP (libwebp + its demuxer for animations), AVIF (libavif:
        // dav1d decodes, libaom encodes for the simulator), GIF (giflib has no pkg-config file:
        // its module map links `gif`).
        .systemLibrary(
            name: "CWebP",
            pkgConfig: "libwebpdemux",
            providers: [.apt(["libwebp-dev"])]
        ),
        // No pkgConfig: libavif.pc's cflags carry -DAVIF_DLL, which SwiftPM prohibits (a
        // warning in every build); the header is in /usr/include and the module map links `avif`.
        .systemLibrary(
            name: "CAVIF",
            providers: [.apt(["libavif-dev"])]
        ),
        .systemLibrary(
            name: "CGIF",
            providers: [.apt(["libgif-dev"])]
        ),
        // Every libjpeg warning of a TurboJPEG decode (TurboJPEG 2.1 keeps only the first text),
        // and libjpeg's own decompressor with a suspending source (verifying a body as it
        // arrives; TurboJPEG 2.1 only decodes whole buffers): links libjpeg62-turbo's `jpeg`.
        .target(name: "CJPEGWarnings", dependencies: ["CTurboJPEG"], linkerSettings: [.linkedLibrary("jpeg")]),
        // libpng's classic row-by-row reader, its setjmp kept in C (the simplified API reads whole images).
        .target(name: "CPNGReader", dependencies: ["CPNG"]),

        // MARK: Libraries
        .target(
            name: "ImageCacheProtocol"
        ),
        // The memcached meta-protocol client of the fleet's shared tier: SwiftNIO and
        // the support target's lock only, so it knows nothing of the engine; ImageCacheServer
        // adapts it to `SharedStore`.
        .target(
            name: "MemcachedMeta",
            dependencies: [
                "ImageCacheSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // NDJSON line framing for both ends of the daemon's socket (the daemon reads requests
        // with it, the client and the gallery's relay read answers): one decoder, NIOCore only,
        // so the client does not link the server to share it, nor the server the client.
        .target(
            name: "LineFraming",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")]
        ),
        // The HTTP/1.1 server under the metrics endpoint, the provider simulator and the gallery: binding
        // (TCP or a Unix socket), NIO's pipeline, requests collected within a body limit, one
        // response writer (whole, paced or broken bodies) and an orderly shutdown; NIO only, so
        // the simulator does not link the daemon nor the daemon the simulator to share it.
        .target(
            name: "HTTPServing",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // Locks, observed values and the three concurrency primitives (a shared outcome, a
        // demand group, a task table): no C library, no SwiftNIO, so the simulator and the
        // command line can use them without linking the engine.
        .target(
            name: "ImageCacheSupport"
        ),
        // cache.conf read into `CacheConfiguration`: plain values over the protocol module, so
        // the command line can find the daemon's socket without linking the engine.
        .target(
            name: "ImageCacheConfig",
            dependencies: [
                "ImageCacheProtocol",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "ImageCacheKit",
            dependencies: [
                "ImageCacheConfig", "ImageCacheProtocol", "ImageCacheSupport", "CCurl", "CTurboJPEG", "CJPEGWarnings", "CPNG", "CPNGReader", "COpenSSLCrypto", "CLinux",
                "CLCMS2", "CWebP", "CAVIF", "CGIF",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "ImageCacheServer",
            dependencies: [
                "ImageCacheKit", "ImageCacheConfig", "ImageCacheProtocol", "MemcachedMeta", "LineFraming", "HTTPServing",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .target(
            name: "ImageCacheClient",
            dependencies: [
                "ImageCacheProtocol", "LineFraming",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The web gallery: a loopback HTTP/WebSocket bridge from a browser tab to a daemon session.
        // Its page is plain files (Assets/), compiled into the module as byte arrays
        // (`PackageResources`) so that `imagecache` stays one file: no resource bundle to install.
        .target(
            name: "ImageCacheGallery",
            dependencies: [
                "ImageCacheClient", "ImageCacheProtocol", "LineFraming", "HTTPServing",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            resources: ["index.html", "app.css", "rpc.js", "masonry.js", "tiles.js", "downloads.js", "detail.js",
                        "metadata.js", "menu.js", "collection.js", "app.js"].map { .embedInCode("Assets/\($0)") }
        ),
        // A real `imagecached` as a child process (started, awaited on its notification socket and
        // `hello`, its log kept, stopped with a bounded wait), for the demo, the tests and the
        // benchmarks alike: over the client and the support target only, so the CLI that
        // starts a daemon still links no part of one.
        .target(
            name: "DaemonChild",
            dependencies: ["ImageCacheClient", "ImageCacheSupport"]
        ),
        .target(
            name: "ImageCacheCLI",
            dependencies: [
                "ImageCacheClient", "ImageCacheProtocol", "ImageCacheGallery", "ImageCacheConfig", "ImageCacheSupport",
                "DaemonChild",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The simulator needs the support target's locks and TurboJPEG/libpng to make its
        // synthetic images; not the engine (no libcurl, no GRDB), so the CLI does not link it.
        .target(
            name: "ProviderSimulator",
            dependencies: [
                "HTTPServing", "ImageCacheSupport", "ImageCacheProtocol", "CTurboJPEG", "CPNG",
                "CWebP", "CAVIF",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),

        // MARK: Executables
        .executableTarget(
            name: "imagecached",
            dependencies: [
                "ImageCacheServer", "ImageCacheKit", "ImageCacheConfig",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The child process of the disk cache's crash test (killed with SIGKILL mid-write).
        .executableTarget(
            name: "cache-crash-writer",
            dependencies: ["ImageCacheKit", .product(name: "Logging", package: "swift-log")]
        ),
        .executableTarget(
            name: "imagecache",
            dependencies: ["ImageCacheCLI"]
        ),
        // The demo's provider simulator as a program of its own: `imagecache demo` runs it as a
        // child, so the command line links none of the image libraries it makes photos with.
        .executableTarget(
            name: "imagecache-simulator",
            dependencies: [
                "ProviderSimulator", "ImageCacheProtocol", "ImageCacheSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),

        // MARK: Tests
        .target(
            name: "TestSupport",
            dependencies: ["ImageCacheKit", "ImageCacheConfig", "ImageCacheProtocol", "ImageCacheSupport", "ProviderSimulator",
                           .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "MemcachedMetaTests",
            dependencies: ["MemcachedMeta", "TestSupport", .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio")]
        ),
        .testTarget(
            name: "HTTPServingTests",
            dependencies: ["HTTPServing", "TestSupport", .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
        ),
        .testTarget(
            name: "LineFramingTests",
            dependencies: ["LineFraming", .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOEmbedded", package: "swift-nio")]
        ),
        .testTarget(
            name: "ImageCacheProtocolTests",
            dependencies: ["ImageCacheProtocol"]
        ),
        .testTarget(
            name: "ImageCacheSupportTests",
            dependencies: ["ImageCacheSupport", "TestSupport"]
        ),
        .testTarget(
            name: "ImageCacheClientTests",
            dependencies: ["ImageCacheClient", "TestSupport", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
        ),
        .testTarget(
            name: "ImageCacheCLITests",
            dependencies: ["ImageCacheCLI", "ImageCacheGallery", "ImageCacheClient", "ImageCacheProtocol", "ImageCacheSupport", "ProviderSimulator", "TestSupport",
                           "DaemonChild", "imagecache-simulator",
                           .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")]
        ),
        .testTarget(
            name: "ImageCacheKitTests",
            dependencies: ["ImageCacheKit", "ImageCacheConfig", "ImageCacheProtocol", "ImageCacheSupport", "TestSupport", "ProviderSimulator", "imagecached", "cache-crash-writer",
                           "CCurl", "CJPEGWarnings", "CPNG", "CTurboJPEG", .product(name: "Logging", package: "swift-log"),
                           .product(name: "GRDB", package: "GRDB.swift")],
            // inputs the fuzzers found, read by the regression tests beside them; the WebP/AVIF/GIF
            // fixtures (and the script that made them), read by FormatDecodingTests
            exclude: ["Fuzz/Inputs", "Imaging/FormatFixtures"]
        ),
        .testTarget(name: "ImageCacheServerTests", dependencies: ["ImageCacheServer", "ImageCacheKit", "ImageCacheConfig", "ImageCacheProtocol", "ImageCacheSupport", "TestSupport", "MemcachedMeta", "DaemonChild",
                                                              .product(name: "Logging", package: "swift-log"), "imagecached", "ProviderSimulator", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio")],
                    exclude: ["Fuzz/Inputs"]),
    ]
)

// MARK: Fuzzing
// libFuzzer targets over every parser of untrusted bytes (Fuzz/README.md, `scripts/fuzz`).
// Declared only when IMAGECACHED_FUZZ=1, so ordinary builds, the tests and CI's test build
// never compile them; `scripts/fuzz` sets it and builds with
// `--sanitize=fuzzer --sanitize=address` in its own scratch path. Debug, so that the targets
// can `@testable import` the parsers, which are internal.
if Context.environment["IMAGECACHED_FUZZ"] == "1" {
    package.products.append(.executable(name: "imagecache-fuzz", targets: ["imagecache-fuzz"]))
    package.targets.append(.executableTarget(
        name: "imagecache-fuzz",
        dependencies: [
            "ImageCacheKit", "ImageCacheConfig", "ImageCacheServer", "ImageCacheProtocol",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ],
        path: "Fuzz/Targets",
        // libFuzzer supplies `main`; the module must not define one.
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    ))
}
