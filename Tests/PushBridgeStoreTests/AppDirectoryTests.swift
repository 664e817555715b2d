import Foundation
import PushBridgeCore
import PushBridgeStore
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import Testing

/// The service's app directory in SQLite: the store keeps vendor bindings of any family (it names no
/// vendor), and a directory written before that keeps its bindings.
@Suite("App directory")
struct AppDirectoryTests {
    @Test("a directory of 0.29 keeps its bindings and then takes a family it did not list")
    func aDirectoryOfBeforeTakesAnyFamily() throws {
        let path = temporaryDirectory() + "/apps.sqlite"
        // The directory as 0.29.0 left it: its two migrations, a CHECK listing two vendors, one binding.
        for statement in [
            "CREATE TABLE pushbridge_migrations (identifier TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
            "CREATE TABLE apps (id TEXT PRIMARY KEY, key_sha256 BLOB NOT NULL UNIQUE CHECK (length(key_sha256) = 32), created_at INTEGER NOT NULL)",
            """
            CREATE TABLE vendor_bindings (app TEXT NOT NULL REFERENCES apps (id), vendor TEXT NOT NULL CHECK (vendor IN ('easemob', 'tencent')),
                key TEXT NOT NULL, account TEXT NOT NULL, secret BLOB NOT NULL, signing_key BLOB NOT NULL, token_seconds INTEGER NOT NULL,
                bound_at INTEGER NOT NULL, PRIMARY KEY (app, vendor), UNIQUE (vendor, key))
            """,
            "INSERT INTO pushbridge_migrations VALUES ('2026-11-23-service-apps', 0), ('2026-11-23-vendor-bindings', 0)",
            "INSERT INTO apps VALUES ('a', zeroblob(32), 1), ('b', randomblob(32), 2)",
            "INSERT INTO vendor_bindings VALUES ('a', 'tencent', '1400000001', 'administrator', X'6B6579', X'', 0, 5)",
        ] { try sqlite(path, statement) }
        #expect(throws: StoreError.self, "0.29's CHECK refuses a family it does not list") {
            try sqlite(path, "INSERT INTO vendor_bindings VALUES ('a', 'example', 'k', 'x', X'01', X'', 0, 6)")
        }

        let directory = try SQLiteAppDirectory(path: path)
        let kept = VendorBinding(
            app: "a", vendor: .init(rawValue: "tencent"), key: "1400000001", account: "administrator", secret: Array("key".utf8), boundAt: Instant(milliseconds: 5))
        #expect(try directory.vendorBindings() == [kept])
        let example = VendorBinding(app: "a", vendor: .init(rawValue: "example"), key: "k", account: "x", secret: [1], boundAt: Instant(milliseconds: 6))
        #expect(try directory.bind(example))
        var other = example
        other.app = "b"
        #expect(try !directory.bind(other), "still one app per key and family")
        #expect(try Set(SQLiteAppDirectory(path: path).vendorBindings()) == [kept, example])
        #expect(try sqlite(path, "SELECT identifier FROM pushbridge_migrations ORDER BY rowid").last == "2026-11-26-vendor-bindings-any-family")
        #expect(throws: StoreError.self, "a family has a name") {
            try sqlite(path, "INSERT INTO vendor_bindings VALUES ('b', '', 'k2', 'x', X'01', X'', 0, 7)")
        }
    }
}
