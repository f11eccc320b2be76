// swift-tools-version: 6.1
// The benchmark runner: a separate package so that the main build and CI never pay for it.
// Build and run with `swift run -c release --package-path Benchmarks imagecache-bench <area>`;
// the scripts in Benchmarks/scripts/ start the peer tools beside it in the same run.
// SwiftPM keeps this package's build plan while only the parent's folders change: after a file
// is added to or removed from the main package, `touch Benchmarks/Package.swift`, else the
// build still compiles the old file list ("cannot find '…' in scope").
import PackageDescription

let package = Package(
    name: "imagecache-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "imagecached", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "imagecache-bench",
            dependencies: [
                .product(name: "ImageCacheKit", package: "imagecached"),
                .product(name: "ImageCacheConfig", package: "imagecached"),
                .product(name: "ImageCacheProtocol", package: "imagecached"),
                .product(name: "ImageCacheServer", package: "imagecached"),
                .product(name: "ImageCacheClient", package: "imagecached"),
                .product(name: "ProviderSimulator", package: "imagecached"),
                .product(name: "DaemonChild", package: "imagecached"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ]
)
