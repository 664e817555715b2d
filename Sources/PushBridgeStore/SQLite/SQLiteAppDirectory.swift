import CSQLite
import Foundation
import PushBridgeCore

/// The service's apps in one SQLite file (WAL, identified migrations, like ``SQLiteStateStore``).
public final class SQLiteAppDirectory: AppDirectory, @unchecked Sendable {
    static let migrations: [Migration] = [
        Migration(
            identifier: "2026-11-23-service-apps",
            sql: """
                CREATE TABLE apps (
                    id TEXT PRIMARY KEY,
                    key_sha256 BLOB NOT NULL UNIQUE CHECK (length(key_sha256) = 32),
                    created_at INTEGER NOT NULL
                );
                """)
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

    public func apps() throws -> [RegisteredApp] {
        try lock.withLock {
            let list = try connection.statement("SELECT id, key_sha256, created_at FROM apps ORDER BY created_at, id")
            defer { list.reset() }
            var out: [RegisteredApp] = []
            while try list.step() {
                out.append(RegisteredApp(id: list.string(0), keyHash: list.bytes(1), createdAt: Instant(milliseconds: list.int64(2))))
            }
            return out
        }
    }

    public func register(_ app: RegisteredApp) throws -> Bool {
        try lock.withLock {
            let insert = try connection.statement("INSERT INTO apps (id, key_sha256, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
            try insert.bind(1, app.id).bind(2, blob: app.keyHash).bind(3, app.createdAt.milliseconds).run()
            return sqlite3_changes(connection.handle) == 1
        }
    }
}
