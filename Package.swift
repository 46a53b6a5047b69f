// swift-tools-version: 6.1
import PackageDescription

// libav* must be linked explicitly from a C target that calls it: a module map's `link`
// does not reach C code. (The sample generator does; the meter's shim loads libav at run time.)
let libav: [LinkerSetting] = [
    .linkedLibrary("avformat"),
    .linkedLibrary("avcodec"),
    .linkedLibrary("avutil"),
]

let package = Package(
    name: "id3-meter",
    // Mutex (Synchronization) is the newest API used.
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ID3MeterCore", targets: ["ID3MeterCore"]),
        .library(name: "ID3Meter", targets: ["ID3Meter"]),
        .executable(name: "id3-meter", targets: ["id3-meter"]),
        .executable(name: "id3-sample-gen", targets: ["id3-sample-gen"]),
    ],
    // A backend that needs only the core depends on this package with `traits: []`: then
    // SwiftPM fetches none of the packages the I/O layer, `serve` and the command line use.
    traits: [
        .trait(name: "IO", description: "ID3Meter: HTTP, streams, live playlists (async-http-client, swift-nio)"),
        .trait(name: "Service", description: "serve and the command line (Hummingbird, Prometheus, ...)", enabledTraits: ["IO"]),
        // Off, `collect` and `report` keep to SQLite, and neither postgres-nio nor swift-crypto
        // (a second BoringSSL, a third of a build from nothing) is built: `make run` builds so.
        .trait(name: "PostgreSQL", description: "collect and report on PostgreSQL (postgres-nio)", enabledTraits: ["Service"]),
        .default(enabledTraits: ["Service", "PostgreSQL"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Built anyway for swift-nio; the outputs' held records are a Deque.
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Built anyway for Hummingbird: the API's connection guard is a NIO handler.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        // Already built for async-http-client: HTTPS trust, client certificates, TLS failures in words.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Built anyway for Hummingbird: serve's signals and shutdown, and the library's Services.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // `collect`'s database: SQLite in a file (the library's own copy of SQLite, nothing to install).
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.2"),
        // ... and PostgreSQL for a fleet.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibAV",
            pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev"])]
        ),
        // Built against libav's headers (in the default include path on Debian) but opens the
        // libraries on first use (dlopen), so it depends on no target that links them: most runs
        // never need libav, and loading it took 40 ms of every start.
        .target(name: "CID3MeterShim", linkerSettings: [.linkedLibrary("z")]),
        // Bytes in, tags out: no C target and no libav, so a backend that holds the bytes
        // builds and links nothing else.
        .target(
            name: "ID3MeterCore",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "ID3Meter",
            dependencies: [
                "ID3MeterCore",
                "CID3MeterShim",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["IO"])),
                .product(name: "DequeModule", package: "swift-collections", condition: .when(traits: ["IO"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["IO"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["IO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["IO"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["IO"])),
                // The connections, a stream's metering and the outputs are Services a backend
                // composes in its own ServiceGroup.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["IO"])),
            ]
        ),
        // The QA report and tag timelines in words and pages, for `scan` and `serve`: the core
        // keeps the findings, this puts them in front of people. The page's script is
        // timeline.js, carried as the generated TimelineScript.swift.
        .target(
            name: "ID3MeterReport",
            dependencies: ["ID3MeterCore"],
            exclude: ["HTML/timeline.js"]
        ),
        // `serve`: many streams in one process, their config, alerts and HTTP API. A target of
        // its own, so that a backend using the library builds none of it.
        .target(
            name: "ID3MeterServe",
            dependencies: [
                "ID3Meter",
                "ID3MeterReport",
                "CID3MeterShim",
                .product(name: "Yams", package: "Yams", condition: .when(traits: ["Service"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Service"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Service"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Service"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["IO"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: ["Service"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Service"])),
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Service"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Service"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Service"])),
                .product(name: "UnixSignals", package: "swift-service-lifecycle", condition: .when(traits: ["Service"])),
                .product(name: "SQLiteNIO", package: "sqlite-nio", condition: .when(traits: ["Service"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Service"])),
            ]
        ),
        .target(
            name: "ID3MeterCommands",
            dependencies: [
                "ID3Meter",
                "ID3MeterReport",
                "ID3MeterServe",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Service"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Service"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Service"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Service"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Service"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Service"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Service"])),
            ]
        ),
        .executableTarget(name: "id3-meter", dependencies: ["CID3MeterShim", "ID3MeterCommands"]),
        .target(
            name: "SampleGenerator",
            dependencies: ["CLibAV", "CID3MeterShim", "ID3Meter"],
            linkerSettings: libav
        ),
        .executableTarget(
            name: "id3-sample-gen",
            dependencies: [
                "SampleGenerator",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Service"])),
            ]
        ),
        .executableTarget(
            name: "custom-engine-example",
            dependencies: ["ID3Meter"],
            path: "Examples/CustomEngine"
        ),
        .executableTarget(
            name: "stored-segments-example",
            dependencies: ["ID3MeterCore"],
            path: "Examples/StoredSegments"
        ),
        // docs/LIBRARY.md's blocks, each a program as written (scripts/library-docs-examples.py):
        // the document's code compiles, in Swift 6 language mode, or the build fails.
        .executableTarget(
            name: "library-docs-core",
            dependencies: ["ID3MeterCore"],
            path: "Examples/LibraryDocs/Core"
        ),
        .executableTarget(name: "library-docs-1", dependencies: ["ID3Meter"], path: "Examples/LibraryDocs/Library1"),
        .executableTarget(name: "library-docs-2", dependencies: ["ID3Meter"], path: "Examples/LibraryDocs/Library2"),
        .executableTarget(name: "library-docs-3", dependencies: ["ID3Meter"], path: "Examples/LibraryDocs/Library3"),
        .executableTarget(name: "library-docs-4", dependencies: ["ID3Meter"], path: "Examples/LibraryDocs/Library4"),
        .executableTarget(
            name: "id3-meter-fuzz",
            dependencies: ["ID3Meter", "ID3MeterCommands", "ID3MeterReport", "ID3MeterServe"]
        ),
        .testTarget(
            name: "ID3MeterTests",
            dependencies: [
                "ID3MeterCore", "ID3Meter", "ID3MeterReport", "ID3MeterServe", "SampleGenerator", "CID3MeterShim",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Service"])),
                .product(name: "Yams", package: "Yams", condition: .when(traits: ["Service"])),
            ],
            // Tests/Conformance holds the cases taken from the players' own tests (docs/CONFORMANCE.md).
            path: "Tests",
            // Read by OutputSnapshotTests from the source tree, not bundled; the shards' list.
            exclude: ["ID3MeterTests/Snapshots", "shards"],
            sources: ["ID3MeterTests", "Conformance"]
        ),
    ]
)
