import Crypto
import Foundation
import Logging
import PushBridgeStore

/// The service's apps on one PostgreSQL database that several nodes share: the directory in schema
/// `pushbridge_service`, the apps' state in tables they share, in schema `pushbridge_apps` (with a
/// schema named, the directory's name and `_apps`).
public struct PostgresServiceStorage: ServiceStorage {
    /// The server and database, with the deadline of one statement or connection attempt.
    public let location: PostgresLocation
    /// The most connections this node opens to the database, for every app and the directory together.
    public var maxConnections: Int { pool.limit }
    private let pool: PostgresConnections
    private let directory: PostgresAppDirectory

    /// Connects the directory (a database that cannot be reached now is no error: a node may start
    /// while its database is down, and every call tries again).
    /// - Parameters:
    ///   - location: the server and database; its `deadline` bounds each statement, each connection
    ///     attempt and each wait for a free connection.
    ///   - connections: the most connections this node opens, however many apps it serves (at least 1).
    /// - Throws: `StoreError` (`newer-schema`, `postgres`).
    public init(location: PostgresLocation, connections: Int = 16) throws {
        self.location = location
        pool = PostgresConnections(location: location, limit: connections, logger: Logger(label: "pushbridge.postgres", factory: { _ in SwiftLogNoOpLogHandler() }), runsItself: false)
        directory = try PostgresAppDirectory(location: location, pool: pool)
    }

    public func openDirectory() throws -> any AppDirectory { directory }

    /// Refuses: the stores of a service on PostgreSQL open awaited (``openStoreAwaited(forApp:)``).
    public func openStore(forApp app: String) throws -> any PushStateStore {
        throw StoreError(.postgres, "a PostgreSQL store opens awaited: a synchronous open would hold a thread while the server answers", context: location.description)
    }

    /// Opens an app's store, awaited: its calls are awaited too (a synchronous one refuses).
    public func openStoreAwaited(forApp app: String) async throws -> any PushStateStore {
        try await PostgresStateStore.open(location: try location.inSchema(appsSchema), app: app, oldSchema: Self.schema(ofApp: app), pool: pool)
    }

    /// Connections open now (idle, in use or being made), for tests and metrics.
    public var openConnections: Int { pool.openCount }

    public func connections() -> StorageConnections? {
        StorageConnections(open: pool.openCount, limit: pool.limit, statements: pool.statements.value, exhausted: pool.exhausted.value)
    }

    public var isShared: Bool { true }

    /// Runs the node's PostgreSQL client (postgres-nio's `PostgresClient`) until the service shuts down.
    public func run() async { await pool.run() }

    public func isReachable() async -> Bool { await directory.isReachable() }

    /// The schema of the tables the apps share.
    private var appsSchema: String { location.schema.map { $0 + "_apps" } ?? "pushbridge_apps" }

    /// The PostgreSQL schema an app's state had before apps shared tables (moved in when the app's
    /// store first opens): `app_`, the id lower-cased with characters other
    /// than a–z, 0–9 and `_` as `_` (at most 40 of them), `_`, and 8 hex digits of the id's SHA-256,
    /// so ids that differ only in case or punctuation get schemas of their own.
    /// - Parameter id: the app id.
    public static func schema(ofApp id: String) -> String {
        let readable = String(id.lowercased().unicodeScalars.prefix(40).map { ("a"..."z").contains($0) || ("0"..."9").contains($0) ? Character($0) : "_" })
        let digest = SHA256.hash(data: Data(id.utf8)).prefix(4).map { String(format: "%02x", $0) }.joined()
        return "app_" + readable + "_" + digest
    }
}
