import Foundation
import Logging
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore
import Synchronization

/// The service's apps, key hashes and vendor bindings in PostgreSQL (the twin of
/// `SQLiteAppDirectory`), in schema `pushbridge_service` unless the location names another: every
/// node of a service sees the same apps.
public final class PostgresAppDirectory: AppDirectory, @unchecked Sendable {
    static let migrations: [PostgresStateStore.Migration] = [
        PostgresStateStore.Migration(
            identifier: "2026-11-23-postgres-service-directory",
            sql: """
                CREATE TABLE apps (
                    id text PRIMARY KEY,
                    key_sha256 bytea NOT NULL UNIQUE CHECK (length(key_sha256) = 32),
                    created_at bigint NOT NULL
                );
                CREATE TABLE vendor_bindings (
                    app text NOT NULL REFERENCES apps (id),
                    vendor text NOT NULL CHECK (vendor IN ('easemob', 'tencent')),
                    key text NOT NULL,
                    account text NOT NULL,
                    secret bytea NOT NULL,
                    signing_key bytea NOT NULL,
                    token_seconds bigint NOT NULL,
                    bound_at bigint NOT NULL,
                    PRIMARY KEY (app, vendor),
                    UNIQUE (vendor, key)
                );
                """),
        // The store names no vendor: a family is whatever name its module stores (0.30.0).
        PostgresStateStore.Migration(
            identifier: "2026-11-26-postgres-vendor-bindings-any-family",
            sql: """
                ALTER TABLE vendor_bindings DROP CONSTRAINT IF EXISTS vendor_bindings_vendor_check;
                ALTER TABLE vendor_bindings ADD CONSTRAINT vendor_bindings_vendor_check CHECK (vendor <> '');
                """),
    ]

    /// Where it is (no password).
    public let location: PostgresLocation
    /// The node's connections (shared with its apps' stores when the service opened it).
    private let pool: PostgresConnections
    private let schema: String
    /// Whether the schema has been brought up to date (done on the first use that connects; two
    /// first uses at once both migrate, which the migration's advisory lock makes one).
    private let isPrepared = Mutex(false)

    /// The directory on a pool of its own (at most two connections), its schema created when missing
    /// and brought up to date on its first call. A server that cannot be reached now is no error:
    /// every call tries again (and says `unreachable` until it answers).
    /// - Parameters:
    ///   - location: the server and database (its schema, or `pushbridge_service`).
    ///   - logger: postgres-nio's logger.
    public convenience init(location: PostgresLocation, logger: Logger = Logger(label: "pushbridge.postgres", factory: { _ in SwiftLogNoOpLogHandler() })) throws {
        try self.init(location: location, pool: PostgresConnections(location: location, limit: 2, logger: logger, runsItself: true))
    }

    /// The directory on a node's pool, prepared on its first use (a node may start while its
    /// database is down).
    init(location: PostgresLocation, pool: PostgresConnections) throws {
        let location = location.schema == nil ? try location.inSchema("pushbridge_service") : location
        self.location = location
        self.pool = pool
        schema = location.schema ?? "pushbridge_service"
    }

    /// Runs `body` on one of the pool's connections in the directory's schema, bringing the schema
    /// up to date first the first time. Awaited; no lock is held while `body` runs.
    private func use<T>(_ body: (PostgresLease) async throws -> T) async throws -> T {
        // Once prepared, the pool sets the search path; the first use's preparing sets it.
        let prepared = isPrepared.withLock { $0 }
        return try await pool.use(schema: prepared ? schema : nil) { session in
            if !prepared {
                try await PostgresStateStore.prepare(session, location, migrations: Self.migrations)
                isPrepared.withLock { $0 = true }
            }
            return try await body(session)
        }
    }

    /// Whether the database answers a trivial statement now (`/readyz`).
    public func isReachable() async -> Bool {
        (try? await use { try await $0.query("SELECT 1") }) != nil
    }

    public func apps() async throws -> [RegisteredApp] {
        try await use { session in
            try await session.query("SELECT \(unescaped: RegisteredAppColumn.sql) FROM apps ORDER BY created_at, id").map { try Cells($0).registeredApp() }
        }
    }

    public func app(_ id: String) async throws -> RegisteredApp? {
        try await use { session in
            try await session.query("SELECT \(unescaped: RegisteredAppColumn.sql) FROM apps WHERE id = \(id)").first.map { try Cells($0).registeredApp() }
        }
    }

    public func register(_ app: RegisteredApp) async throws -> Bool {
        try await use { session in
            !(try await session.query(
                "INSERT INTO apps (id, key_sha256, created_at) VALUES (\(app.id), \(ByteBuffer(bytes: app.keyHash)), \(app.createdAt.milliseconds)) ON CONFLICT DO NOTHING RETURNING 1"
            ).isEmpty)
        }
    }

    public func vendorBindings() async throws -> [VendorBinding] {
        try await use { session in
            try await session.query("SELECT \(unescaped: VendorBindingColumn.sql) FROM vendor_bindings ORDER BY app, vendor")
                .map { try Cells($0).vendorBinding() }
        }
    }

    public func bind(_ binding: VendorBinding) async throws -> Bool {
        try await use { session in
            try await session.execute("BEGIN")
            do {
                // One binder at a time, on every node: the key check and the upsert are one step.
                try await session.query("SELECT pg_advisory_xact_lock(\(PostgresStateStore.writeLock), hashtext(\(location.schema ?? "")))")
                let taken = try await session.query(
                    "SELECT app FROM vendor_bindings WHERE vendor = \(binding.vendor.rawValue) AND key = \(binding.key) AND app <> \(binding.app)")
                if taken.isEmpty {
                    try await session.query(
                        """
                        INSERT INTO vendor_bindings (app, vendor, key, account, secret, signing_key, token_seconds, bound_at)
                        VALUES (\(binding.app), \(binding.vendor.rawValue), \(binding.key), \(binding.account), \(ByteBuffer(bytes: binding.secret)),
                            \(ByteBuffer(bytes: binding.signingKey)), \(binding.tokenSeconds), \(binding.boundAt.milliseconds))
                        ON CONFLICT (app, vendor) DO UPDATE SET key = excluded.key, account = excluded.account, secret = excluded.secret,
                            signing_key = excluded.signing_key, token_seconds = excluded.token_seconds, bound_at = excluded.bound_at
                        """)
                }
                try await session.execute("COMMIT")
                return taken.isEmpty
            } catch {
                try await PostgresStateStore.rollBack(session)
                throw error
            }
        }
    }

    public func unbind(app: String, vendor: VendorBinding.Vendor) async throws -> Bool {
        try await use { session in
            !(try await session.query("DELETE FROM vendor_bindings WHERE app = \(app) AND vendor = \(vendor.rawValue) RETURNING 1").isEmpty)
        }
    }
}
