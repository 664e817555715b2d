import Foundation
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// `Examples/ConformanceExample` is another package that runs PushBridge's fixtures against its own
/// implementation from its own `swift test` (Swift Testing and XCTest); the suite builds and runs it.
@Suite("Example package")
struct ExamplePackageTests {
    @Test func theExamplePackageBuildsAndItsConformanceTestsPass() throws {
        let scratch = Repository.root.appendingPathComponent(".build/examples")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "swift", "test", "--package-path", Repository.root.appendingPathComponent("Examples/ConformanceExample").path,
            "--scratch-path", scratch.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let tail = text.split(separator: "\n").suffix(15).joined(separator: "\n")
        #expect(process.terminationStatus == 0, "\(tail)")
        #expect(text.contains("Executed 1 test, with 0 failures"), "XCTest ran: \(tail)")
        #expect(text.contains("✔ Test toyServerConformsToPushBridge() passed"), "\(tail)")
        #expect(text.contains("✔ Test aBadgeBugIsCaught() passed"), "\(tail)")
        // The conformance library links no store, facade or SQLite into the example's test binary.
        let binary = scratch.appendingPathComponent("debug/ConformanceExamplePackageTests.xctest")
        let contents = try Data(contentsOf: binary)
        #expect(contents.range(of: Data("libsqlite3".utf8)) == nil, "the example's test binary links SQLite")
        #expect(contents.range(of: Data("SQLiteStateStore".utf8)) == nil, "the store is linked into the example")
        #expect(contents.range(of: Data("libjson-c".utf8)) != nil, "the strict comparison (json-c) is expected in the harness")
    }
}
