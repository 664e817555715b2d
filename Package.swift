// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "PushBridge",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PushBridgeJSON", targets: ["PushBridgeJSON"]),
        .library(name: "PushBridgeCore", targets: ["PushBridgeCore"]),
        .library(name: "PushBridgeDialects", targets: ["PushBridgeDialects"]),
        .library(name: "PushBridgeConformance", targets: ["PushBridgeConformance"]),
        .library(name: "PushBridgeStore", targets: ["PushBridgeStore"]),
        .library(name: "PushBridgeFacade", targets: ["PushBridgeFacade"]),
        .library(name: "PushBridgeFacadeConformance", targets: ["PushBridgeFacadeConformance"]),
        .library(name: "PushBridgeVendorREST", targets: ["PushBridgeVendorREST"]),
        .library(name: "PushBridgeServer", targets: ["PushBridgeServer"]),
        .library(name: "PushBridgeEasemob", targets: ["PushBridgeEasemob"]),
        .library(name: "PushBridgeTencent", targets: ["PushBridgeTencent"]),
        .library(name: "PushBridgeServiceConformance", targets: ["PushBridgeServiceConformance"]),
        .library(name: "PushBridgeDelivery", targets: ["PushBridgeDelivery"]),
        .library(name: "PushBridgeAPNsMock", targets: ["PushBridgeAPNsMock"]),
        .library(name: "PushBridgeTesting", targets: ["PushBridgeTesting"]),
        .executable(name: "pushbridge", targets: ["pushbridge"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The APNs capture's own CA and server certificates (`conform --capture-apns`).
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        // The service (`pushbridge serve`): HTTP, lifecycle, logs, metrics, key hashing, configuration.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.1.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // HTTP/1 framing below the router (the service's HTTPFramingHandler); Hummingbird's own dependencies.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The HTTP client of service conformance runs (`conform --service`) and of the tests.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        // APNs delivery (HTTP/2 over TLS) and the mock APNs.
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The PostgreSQL store (several nodes on one database).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // `make docs`: the DocC catalogs in Sources/ (a build plugin only; nothing links it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    // The module graph, lowest first. Data flows one way: dialect JSON → canonical → decision → bytes.
    // `Tests/pushbridgeTests/ModuleGraphTests.swift` fails when an edge breaks these rules:
    // the core needs only PushBridgeJSON (no system library); the harness knows no store, facade,
    // server or delivery; the store knows no facade; nothing imports an executable.
    targets: [
        // libjson-c: the strict, typed payload comparison (the conformance harness only).
        .systemLibrary(name: "CJSONC", pkgConfig: "json-c", providers: [.apt(["libjson-c-dev"])]),
        // libsqlite3: the facade's persistent state.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Strict JSON: parsing with JSON pointers in errors, deterministic writing. Links no system library.
        .target(name: "PushBridgeJSON"),
        // The pure core: canonical state, message, decision and rendering. No I/O, no dialect knowledge.
        .target(name: "PushBridgeCore", dependencies: ["PushBridgeJSON"]),
        // One adapter per vendor dialect, and the scenario engine that drives them.
        .target(name: "PushBridgeDialects", dependencies: ["PushBridgeCore", "PushBridgeJSON"]),
        // The conformance harness as a library: fixtures, running, strict comparison (json-c), reports.
        // It knows implementations only through the `DecisionProvider` protocol.
        .target(name: "PushBridgeConformance", dependencies: ["CJSONC", "PushBridgeDialects", "PushBridgeCore", "PushBridgeJSON"]),
        // PushBridge's stored binary formats, one versioned codec of the core's values: the sent-message
        // record (PBR1–PBR4) and its roll (PBL1), the badge log's rows; varints, runs, tokens. Pure: the core only.
        .target(name: "PushBridgeRecordCoding", dependencies: ["PushBridgeCore", "PushBridgeJSON"]),
        // Canonical push state behind a protocol: SQLite (WAL, migrations) and its in-memory twin; and
        // ServiceStorage, where a service keeps its apps (the executable builds one, tests pass a twin).
        .target(name: "PushBridgeStore", dependencies: ["CSQLite", "PushBridgeRecordCoding", "PushBridgeCore", "PushBridgeJSON"]),
        // The multi-vendor facade: apply dialect calls, set group members, send → one decision per receiver.
        .target(name: "PushBridgeFacade", dependencies: ["PushBridgeStore", "PushBridgeRecordCoding", "PushBridgeDialects", "PushBridgeCore", "PushBridgeJSON"]),
        // The facade as a conformance implementation (`conform --via-store`): the one place that knows both.
        .target(
            name: "PushBridgeFacadeConformance",
            dependencies: ["PushBridgeFacade", "PushBridgeConformance", "PushBridgeStore", "PushBridgeDialects", "PushBridgeCore", "PushBridgeJSON"]),
        // zlib: Tencent's UserSig is a zlib stream.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The vendors' credentials (UserSig v2, app tokens, Agora AccessToken2, strict base64) and the
        // message a vendor send becomes. Pure signatures: no I/O, no server; the conformance harness makes
        // credentials with it. Each vendor's REST lives in its own module (PushBridgeEasemob, PushBridgeTencent).
        .target(
            name: "PushBridgeVendorREST",
            dependencies: ["CZlib", "PushBridgeDialects", "PushBridgeCore", "PushBridgeJSON", .product(name: "Crypto", package: "swift-crypto")]),
        // Delivery to APNs (Specification §13): the outbox worker, the HTTP/2 client (swift-nio-http2 over swift-nio-ssl),
        // provider tokens (ES256 with swift-crypto), certificate auth, and the feedback URL (async-http-client). On top
        // of the facade: it moves bytes the decisions already made, and adds no rule.
        .target(
            name: "PushBridgeDelivery",
            dependencies: [
                "PushBridgeFacade", "PushBridgeStore", "PushBridgeCore", "PushBridgeJSON",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"), .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ]),
        // The state on PostgreSQL: the same PushStateStore protocol as SQLite, shared by several service
        // nodes; PostgresServiceStorage (a schema per app) and PostgresStorageBackend (`store: postgres://…`,
        // which the executable offers). On top of PushBridgeStore; knows no facade or server.
        .target(
            name: "PushBridgePostgres",
            dependencies: [
                "PushBridgeStore", "PushBridgeRecordCoding", "PushBridgeCore", "PushBridgeJSON",
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // A mock APNs as test support (HTTP/2 over TLS on loopback, scripted answers, recorded
        // requests): for PushBridge's tests and for anyone testing a push sender. Knows no PushBridge module.
        // Test support anyone can use: a PushBridge service inside a test, on a loopback port or behind the
        // router (Hummingbird's testing). Pairs with PushBridgeAPNsMock for delivery.
        .target(
            name: "PushBridgeTesting",
            dependencies: [
                "PushBridgeServer", "PushBridgeEasemob", "PushBridgeTencent", "PushBridgeStore", "PushBridgeJSON",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .target(
            name: "PushBridgeAPNsMock",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // The service: the facade over HTTP (Specification §11) on an injected ServiceStorage: the registry of
        // open apps (opened once off the request path, idle ones closed), a group-commit writer per app
        // on a serial queue (no thread per app), delivery workers as child tasks, auth and metrics.
        // A new module on top of the facade: it adds transport, never rules.
        .target(
            name: "PushBridgeServer",
            dependencies: [
                "PushBridgeDelivery", "PushBridgeVendorREST", "PushBridgeFacade", "PushBridgeStore", "PushBridgeDialects", "PushBridgeCore",
                "PushBridgeJSON", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // One module per vendor REST family (Specification §12, §14): its REST bodies as dialect calls and messages, its
        // routes at the vendor's paths, its binding's shape, its authentication and error shape, offered as a
        // VendorRESTFamily (`.easemob`, `.tencent`) that the executable composes. The server names no vendor.
        .target(
            name: "PushBridgeEasemob",
            dependencies: [
                "PushBridgeServer", "PushBridgeVendorREST", "PushBridgeFacade", "PushBridgeStore", "PushBridgeDialects", "PushBridgeCore", "PushBridgeJSON",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "PushBridgeTencent",
            dependencies: [
                "PushBridgeServer", "PushBridgeVendorREST", "PushBridgeFacade", "PushBridgeStore", "PushBridgeDialects", "PushBridgeCore", "PushBridgeJSON",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Service fixtures (`Fixtures/service`) against a running service over HTTP: the conformance
        // harness's comparison with an HTTP client. Knows no server code, only the wire.
        .target(
            name: "PushBridgeServiceConformance",
            dependencies: [
                "PushBridgeConformance", "PushBridgeVendorREST", "PushBridgeJSON", "PushBridgeAPNsMock", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        .executableTarget(
            name: "pushbridge",
            dependencies: [
                "PushBridgeServer", "PushBridgeEasemob", "PushBridgeTencent", "PushBridgePostgres", "PushBridgeServiceConformance", "PushBridgeAPNsMock", "PushBridgeVendorREST", "PushBridgeFacadeConformance", "PushBridgeFacade", "PushBridgeStore", "PushBridgeConformance", "PushBridgeDialects",
                "PushBridgeCore", "PushBridgeJSON", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // `make bench`: release-build throughput against baselines measured in the same run.
        .executableTarget(
            name: "pushbridge-bench",
            dependencies: [
                "PushBridgeServer", "PushBridgeEasemob", "PushBridgeTencent", "PushBridgeVendorREST", "PushBridgeDelivery", "PushBridgeAPNsMock", "PushBridgePostgres", "PushBridgeFacade", "PushBridgeStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                "PushBridgeConformance", "PushBridgeDialects", "PushBridgeCore", "PushBridgeJSON", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"), .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/PushBridgeBench",
            resources: [.copy("recorded.json")]
        ),
        // Test support, split by what it supports: each test target gets its module and the least of it it needs
        // (`ModuleGraphTests` guards it). The base: repository paths, running the tool, fixtures, golden files,
        // scratch files and processes — the harness and JSON only.
        .target(name: "PushBridgeTestSupport", dependencies: ["PushBridgeConformance", "PushBridgeJSON"], path: "Tests/PushBridgeTestSupport"),
        // Stores: the facade over every backing (memory, SQLite, the test PostgreSQL), raw SQLite, reliability scenarios.
        .target(
            name: "PushBridgeStoreTestSupport",
            dependencies: ["PushBridgeTestSupport", "CSQLite", "PushBridgeFacade", "PushBridgePostgres", "PushBridgeStore", "PushBridgeDialects", "PushBridgeCore", "PushBridgeJSON"],
            path: "Tests/PushBridgeStoreTestSupport"),
        // Vendor credentials: base64url spellings and UserSig verification.
        .target(name: "PushBridgeVendorRESTTestSupport", dependencies: ["PushBridgeVendorREST"], path: "Tests/PushBridgeVendorRESTTestSupport"),
        // The service: a service on a loopback port, mock APNs credentials, server processes, the example app.
        .target(
            name: "PushBridgeServiceTestSupport",
            dependencies: [
                "PushBridgeTestSupport", "PushBridgeStoreTestSupport", "PushBridgeAPNsMock", "PushBridgeDelivery", "PushBridgeServer", "PushBridgeEasemob", "PushBridgeTencent", "PushBridgeTesting",
                "PushBridgePostgres", "PushBridgeFacade", "PushBridgeStore", "PushBridgeDialects", "PushBridgeCore", "PushBridgeJSON",
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/PushBridgeServiceTestSupport"),
        // One test target per module (Tests/<module>Tests): the module, the support it needs, and the `pushbridge`
        // executable only where a test runs the tool.
        moduleTests("PushBridgeJSONTests", ["PushBridgeConformance", "PushBridgeJSON"], support: .base, runsTheTool: false),
        moduleTests("PushBridgeCoreTests", ["PushBridgeConformance", "PushBridgeCore", "PushBridgeDialects", "PushBridgeJSON"], support: .base, runsTheTool: false),
        moduleTests("PushBridgeDialectsTests", ["PushBridgeConformance", "PushBridgeCore", "PushBridgeDialects", "PushBridgeJSON"], support: .base),
        moduleTests("PushBridgeConformanceTests", ["PushBridgeConformance", "PushBridgeCore", "PushBridgeDialects", "PushBridgeJSON"], support: .base),
        moduleTests("PushBridgeStoreTests", ["PushBridgeCore", "PushBridgeDialects", "PushBridgeFacade", "PushBridgeJSON", "PushBridgeRecordCoding", "PushBridgeStore"], support: .store),
        moduleTests("PushBridgeFacadeTests", ["CSQLite", "PushBridgeConformance", "PushBridgeCore", "PushBridgeDialects", "PushBridgeFacade", "PushBridgeFacadeConformance", "PushBridgeJSON", "PushBridgePostgres", "PushBridgeRecordCoding", "PushBridgeStore"], support: .store),
        moduleTests("PushBridgeVendorRESTTests", ["PushBridgeCore", "PushBridgeJSON", "PushBridgeVendorREST"], support: .vendorREST, runsTheTool: false,
            // Read from the source tree: the UserSig vectors Tencent's generator made, and the script that made them.
            exclude: ["usersig-vectors.json", "make_usersig_vectors.py", "agora-token-vectors.json", "make_agora_vectors.py"]),
        moduleTests("PushBridgeEasemobTests", ["PushBridgeCore", "PushBridgeEasemob", "PushBridgeJSON"], support: .base, runsTheTool: false),
        moduleTests("PushBridgeTencentTests", ["PushBridgeJSON", "PushBridgeTencent"], support: .base, runsTheTool: false),
        moduleTests("PushBridgeServerTests", ["PushBridgeAPNsMock", "PushBridgeEasemob", "PushBridgeTencent", "PushBridgeConformance", "PushBridgeCore", "PushBridgeDelivery", "PushBridgeDialects", "PushBridgeFacade", "PushBridgeJSON", "PushBridgeServer", "PushBridgeServiceConformance", "PushBridgeStore", "PushBridgeVendorREST"],
            support: .service,
            products: [.product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "Crypto", package: "swift-crypto"), .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"), .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")]),
        moduleTests("PushBridgeDeliveryTests", ["PushBridgeAPNsMock", "PushBridgeCore", "PushBridgeDelivery", "PushBridgeFacade", "PushBridgeJSON", "PushBridgeServer", "PushBridgeStore"],
            support: .service,
            products: [.product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "Crypto", package: "swift-crypto"), .product(name: "Hummingbird", package: "hummingbird")]),
        moduleTests("PushBridgePostgresTests", ["PushBridgeAPNsMock", "PushBridgeCore", "PushBridgeDelivery", "PushBridgeFacade", "PushBridgeJSON", "PushBridgePostgres", "PushBridgeServer", "PushBridgeStore"],
            support: .service,
            products: [.product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "PostgresNIO", package: "postgres-nio")]),
        moduleTests("pushbridgeTests", ["PushBridgeCore", "PushBridgeDialects", "PushBridgeFacade", "PushBridgeJSON", "PushBridgeStore"], support: .store),
    ]
)

/// The test support a test target needs: the base, or the base with stores, vendor credentials or the service.
enum TestSupport {
    case base, store, vendorREST, service

    var targets: [Target.Dependency] {
        switch self {
        case .base: ["PushBridgeTestSupport"]
        case .store: ["PushBridgeTestSupport", "PushBridgeStoreTestSupport"]
        case .vendorREST: ["PushBridgeTestSupport", "PushBridgeVendorRESTTestSupport"]
        case .service: ["PushBridgeTestSupport", "PushBridgeStoreTestSupport", "PushBridgeVendorRESTTestSupport", "PushBridgeServiceTestSupport"]
        }
    }
}

/// A module's test target, `Tests/<name>`: its dependencies and the test support it needs; and the `pushbridge`
/// executable when its tests run the tool (they find it built).
func moduleTests(
    _ name: String, _ modules: [Target.Dependency], support: TestSupport, runsTheTool: Bool = true, products: [Target.Dependency] = [], exclude: [String] = []
) -> Target {
    .testTarget(name: name, dependencies: modules + products + support.targets + (runsTheTool ? ["pushbridge"] : []), exclude: exclude)
}
