// swift-tools-version:6.1
// An example of another package running PushBridge's fixtures against its own implementation
// from its own `swift test`, with Swift Testing and with XCTest.
import Foundation
import PackageDescription

// A path dependency's identity is its folder name, whatever the checkout is called.
let pushBridge = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL

let package = Package(
    name: "ConformanceExample",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..")],
    targets: [
        // The implementation under test: a push service with its own decision code.
        .target(
            name: "ToyPushServer",
            dependencies: [.product(name: "PushBridgeDialects", package: pushBridge.lastPathComponent)]
        ),
        .testTarget(
            name: "ToyPushServerTests",
            dependencies: ["ToyPushServer", .product(name: "PushBridgeConformance", package: pushBridge.lastPathComponent)]
        ),
    ]
)
