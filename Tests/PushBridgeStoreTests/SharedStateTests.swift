import Foundation
import PushBridgeCore
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The SQLite connection keeps the app configuration and certificates between transactions; what
/// another connection (another process: `pushbridge app` beside a running service) commits, a
/// rollback, or a change in a savepoint must never leave it stale.
@Suite("Shared state on a connection")
struct SharedStateTests {
    static func app(_ bundle: String) -> AppConfiguration {
        AppConfiguration(certificates: [Certificate(name: "cert", busiId: nil, bundleId: bundle, environment: .production)])
    }

    @Test func anotherConnectionsCommitIsSeen() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("shared-\(UUID().uuidString).sqlite").path
        let service = try SQLiteStateStore(path: path)
        let other = try SQLiteStateStore(path: path)
        try service.write { try $0.setApp(Self.app("io.first")) }
        #expect(try service.write { try $0.app() } == Self.app("io.first"))  // now kept on the connection
        try other.write { try $0.setApp(Self.app("io.second")) }
        #expect(try service.write { try $0.app() } == Self.app("io.second"), "a commit of another connection")
    }

    @Test func aRolledBackChangeIsForgotten() throws {
        let store = try SQLiteStateStore(path: FileManager.default.temporaryDirectory.appendingPathComponent("shared-\(UUID().uuidString).sqlite").path)
        try store.write { try $0.setApp(Self.app("io.kept")) }
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.write { transaction in
                try transaction.setApp(Self.app("io.refused"))
                #expect(try transaction.app() == Self.app("io.refused"))
                throw Refused()
            }
        }
        #expect(try store.write { try $0.app() } == Self.app("io.kept"))
    }
}
