import Foundation
import Logging
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

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
    private let pool: PostgresPool
    private let schema: String
    /// Whether the schema has been brought up to date (done on the first use that connects).
    private var isPrepared = false
    /// Guards ``isPrepared``; held while the migrations run, the first time only.
    private let preparing = NSLock()

    /// Connects (a pool of its own, at most two connections), creates the schema when missing and
    /// brings it up to date. A server that cannot be reached now is no error: every call tries again
    /// (and says `unreachable` until it answers), so a node can start while its database is down.
    /// - Parameters:
    ///   - location: the server and database (its schema, or `pushbridge_service`).
    ///   - logger: postgres-nio's logger.
    /// - Throws: `StoreError` (`newer-schema`, `postgres`).
    public convenience init(location: PostgresLocation, logger: Logger = Logger(label: "pushbridge.postgres", factory: { _ in SwiftLogNoOpLogHandler() })) throws {
        try self.init(location: location, pool: PostgresPool(location: location, limit: 2, logger: logger))
    }

    /// The directory on a node's pool (see ``init(location:logger:)``).
    init(location: PostgresLocation, pool: PostgresPool) throws {
        let location = location.schema == nil ? try location.inSchema("pushbridge_service") : location
        self.location = location
        self.pool = pool
        schema = location.schema ?? "pushbridge_service"
        do {
            try use { _ in }
        } catch let error as StoreError where error.code == .unreachable || error.code == .busy {
            // Tried again on the next call.
        }
    }

    /// Runs `body` on one of the pool's connections in the directory's schema, bringing the schema
    /// up to date first the first time. No lock is held while `body` runs.
    private func use<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try pool.use(schema: schema) { session in
            if !preparing.withLock({ isPrepared }) {
                try preparing.withLock {
                    guard !isPrepared else { return }
                    try PostgresStateStore.prepare(session, location, migrations: Self.migrations)
                    isPrepared = true
                }
            }
            return try body(session)
        }
    }

    /// Whether the database answers a trivial statement now (`/readyz`).
    public func isReachable() -> Bool {
        (try? use { try $0.query("SELECT 1") }) != nil
    }

    public func apps() throws -> [RegisteredApp] {
        try use { session in
            try session.query("SELECT \(unescaped: RegisteredAppColumn.sql) FROM apps ORDER BY created_at, id").map { try Cells($0).registeredApp() }
        }
    }

    public func app(_ id: String) throws -> RegisteredApp? {
        try use { session in
            try session.query("SELECT \(unescaped: RegisteredAppColumn.sql) FROM apps WHERE id = \(id)").first.map { try Cells($0).registeredApp() }
        }
    }

    public func register(_ app: RegisteredApp) throws -> Bool {
        try use { session in
            !(try session.query(
                "INSERT INTO apps (id, key_sha256, created_at) VALUES (\(app.id), \(ByteBuffer(bytes: app.keyHash)), \(app.createdAt.milliseconds)) ON CONFLICT DO NOTHING RETURNING 1"
            ).isEmpty)
        }
    }

    public func vendorBindings() throws -> [VendorBinding] {
        try use { session in
            try session.query("SELECT \(unescaped: VendorBindingColumn.sql) FROM vendor_bindings ORDER BY app, vendor")
                .map { try Cells($0).vendorBinding() }
        }
    }

    public func bind(_ binding: VendorBinding) throws -> Bool {
        try use { session in
            try PostgresStateStore.transaction(session) {
                // One binder at a time, on every node: the key check and the upsert are one step.
                try session.query("SELECT pg_advisory_xact_lock(\(PostgresStateStore.writeLock), hashtext(\(location.schema ?? "")))")
                let taken = try session.query(
                    "SELECT app FROM vendor_bindings WHERE vendor = \(binding.vendor.rawValue) AND key = \(binding.key) AND app <> \(binding.app)")
                if !taken.isEmpty { return false }
                try session.query(
                    """
                    INSERT INTO vendor_bindings (app, vendor, key, account, secret, signing_key, token_seconds, bound_at)
                    VALUES (\(binding.app), \(binding.vendor.rawValue), \(binding.key), \(binding.account), \(ByteBuffer(bytes: binding.secret)),
                        \(ByteBuffer(bytes: binding.signingKey)), \(binding.tokenSeconds), \(binding.boundAt.milliseconds))
                    ON CONFLICT (app, vendor) DO UPDATE SET key = excluded.key, account = excluded.account, secret = excluded.secret,
                        signing_key = excluded.signing_key, token_seconds = excluded.token_seconds, bound_at = excluded.bound_at
                    """)
                return true
            }
        }
    }

    public func unbind(app: String, vendor: VendorBinding.Vendor) throws -> Bool {
        try use { session in
            !(try session.query("DELETE FROM vendor_bindings WHERE app = \(app) AND vendor = \(vendor.rawValue) RETURNING 1").isEmpty)
        }
    }
}
