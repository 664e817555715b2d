import CSQLite
import Foundation
import PushBridgeCore

/// The service's apps in one SQLite file (WAL, identified migrations, like ``SQLiteStateStore``).
public final class SQLiteAppDirectory: LocalAppDirectory, @unchecked Sendable {
    static let migrations: [Migration] = [
        Migration(
            identifier: "2026-11-23-service-apps",
            sql: """
                CREATE TABLE apps (
                    id TEXT PRIMARY KEY,
                    key_sha256 BLOB NOT NULL UNIQUE CHECK (length(key_sha256) = 32),
                    created_at INTEGER NOT NULL
                );
                """),
        Migration(
            identifier: "2026-11-23-vendor-bindings",
            sql: """
                CREATE TABLE vendor_bindings (
                    app TEXT NOT NULL REFERENCES apps (id),
                    vendor TEXT NOT NULL CHECK (vendor IN ('easemob', 'tencent')),
                    key TEXT NOT NULL,
                    account TEXT NOT NULL,
                    secret BLOB NOT NULL,
                    signing_key BLOB NOT NULL,
                    token_seconds INTEGER NOT NULL,
                    bound_at INTEGER NOT NULL,
                    PRIMARY KEY (app, vendor),
                    UNIQUE (vendor, key)
                );
                """),
        // The store names no vendor: a family is whatever name its module stores (0.30.0). SQLite
        // changes a CHECK only by copying the table.
        Migration(
            identifier: "2026-11-26-vendor-bindings-any-family",
            sql: """
                CREATE TABLE vendor_bindings_any_family (
                    app TEXT NOT NULL REFERENCES apps (id),
                    vendor TEXT NOT NULL CHECK (vendor <> ''),
                    key TEXT NOT NULL,
                    account TEXT NOT NULL,
                    secret BLOB NOT NULL,
                    signing_key BLOB NOT NULL,
                    token_seconds INTEGER NOT NULL,
                    bound_at INTEGER NOT NULL,
                    PRIMARY KEY (app, vendor),
                    UNIQUE (vendor, key)
                );
                INSERT INTO vendor_bindings_any_family
                    SELECT app, vendor, key, account, secret, signing_key, token_seconds, bound_at FROM vendor_bindings;
                DROP TABLE vendor_bindings;
                ALTER TABLE vendor_bindings_any_family RENAME TO vendor_bindings;
                """),
    ]

    private let connection: SQLiteConnection
    private let lock = NSLock()

    /// Opens or creates the directory file.
    /// - Parameter path: the database file.
    /// - Throws: ``StoreError`` when it cannot be opened or was written by a newer PushBridge.
    public init(path: String) throws {
        connection = try SQLiteConnection(path: path)
        sqlite3_busy_timeout(connection.handle, 5_000)
        try connection.execute("PRAGMA journal_mode = WAL")
        try SQLiteStateStore.migrate(connection, migrations: Self.migrations)
    }

    package func apps() throws -> [RegisteredApp] {
        try lock.withLock {
            let list = try connection.statement("SELECT \(RegisteredAppColumn.sql) FROM apps ORDER BY created_at, id")
            defer { list.reset() }
            var out: [RegisteredApp] = []
            while try list.step() { out.append(try SQLiteRow(list).registeredApp()) }
            return out
        }
    }

    package func register(_ app: RegisteredApp) throws -> Bool {
        try lock.withLock {
            let insert = try connection.statement("INSERT INTO apps (id, key_sha256, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
            try insert.bind(1, app.id).bind(2, blob: app.keyHash).bind(3, app.createdAt.milliseconds).run()
            return sqlite3_changes(connection.handle) == 1
        }
    }

    package func vendorBindings() throws -> [VendorBinding] {
        try lock.withLock {
            let list = try connection.statement("SELECT \(VendorBindingColumn.sql) FROM vendor_bindings ORDER BY app, vendor")
            defer { list.reset() }
            var out: [VendorBinding] = []
            while try list.step() { out.append(try SQLiteRow(list).vendorBinding()) }
            return out
        }
    }

    package func bind(_ binding: VendorBinding) throws -> Bool {
        try lock.withLock {
            try connection.execute("BEGIN IMMEDIATE")
            do {
                let taken = try connection.statement("SELECT app FROM vendor_bindings WHERE vendor = ? AND key = ? AND app <> ?")
                defer { taken.reset() }
                taken.bind(1, binding.vendor.rawValue).bind(2, binding.key).bind(3, binding.app)
                if try taken.step() {
                    try connection.execute("ROLLBACK")
                    return false
                }
                let upsert = try connection.statement(
                    """
                    INSERT INTO vendor_bindings (app, vendor, key, account, secret, signing_key, token_seconds, bound_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (app, vendor) DO UPDATE SET key = excluded.key, account = excluded.account, secret = excluded.secret,
                        signing_key = excluded.signing_key, token_seconds = excluded.token_seconds, bound_at = excluded.bound_at
                    """)
                try upsert.bind(1, binding.app).bind(2, binding.vendor.rawValue).bind(3, binding.key).bind(4, binding.account)
                    .bind(5, blob: binding.secret).bind(6, blob: binding.signingKey).bind(7, binding.tokenSeconds)
                    .bind(8, binding.boundAt.milliseconds).run()
                try connection.execute("COMMIT")
                return true
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    package func unbind(app: String, vendor: VendorBinding.Vendor) throws -> Bool {
        try lock.withLock {
            let delete = try connection.statement("DELETE FROM vendor_bindings WHERE app = ? AND vendor = ?")
            try delete.bind(1, app).bind(2, vendor.rawValue).run()
            return sqlite3_changes(connection.handle) == 1
        }
    }

    // Awaited: each call on the storage calls' queue (no caller's thread waits on the file).

    public func apps() async throws -> [RegisteredApp] { try await DispatchQueue.storageCalls.transaction { try self.apps() } }

    public func app(_ id: String) async throws -> RegisteredApp? {
        try await DispatchQueue.storageCalls.transaction { try self.apps().first { $0.id == id } }
    }

    public func register(_ app: RegisteredApp) async throws -> Bool { try await DispatchQueue.storageCalls.transaction { try self.register(app) } }

    public func vendorBindings() async throws -> [VendorBinding] { try await DispatchQueue.storageCalls.transaction { try self.vendorBindings() } }

    public func bind(_ binding: VendorBinding) async throws -> Bool { try await DispatchQueue.storageCalls.transaction { try self.bind(binding) } }

    public func unbind(app: String, vendor: VendorBinding.Vendor) async throws -> Bool {
        try await DispatchQueue.storageCalls.transaction { try self.unbind(app: app, vendor: vendor) }
    }
}
