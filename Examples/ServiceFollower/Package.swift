// swift-tools-version: 6.1
import PackageDescription

// A backend's own package, as it would depend on id3-meter: ID3Meter with the `IO` trait (none
// of `serve`'s or the command line's packages), and the swift-server packages it uses itself.
// LibraryResourceTests builds it (`swift build --package-path Examples/ServiceFollower`) and runs it.
let package = Package(
    name: "ServiceFollower",
    platforms: [.macOS(.v15)],
    dependencies: [
        // A backend writes its copy's URL and a version (docs/LIBRARY.md); this one is the
        // repository it sits in. `name:` gives the path its identity whatever the folder is called.
        .package(name: "id3-meter", path: "../..", traits: ["IO"]),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .executableTarget(
            name: "ServiceFollower",
            dependencies: [
                .product(name: "ID3Meter", package: "id3-meter"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ]
)
