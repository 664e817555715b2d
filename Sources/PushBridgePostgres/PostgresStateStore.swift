import Foundation
import Logging
import PostgresNIO
import PushBridgeStore

/// Push state in PostgreSQL, shared by several service nodes (issue 19, work in progress): it
/// connects, migrates under an advisory lock and reports its migrations. It does not conform to
/// `PushStateStore` yet: the transactions are the next step (see the README's closing notes).
public final class PostgresStateStore: @unchecked Sendable {
    /// Where it is (no password).
    public let location: PostgresLocation
    let session: PostgresSession
    let lock = NSLock()

    /// Connects and brings the schema up to date.
    /// - Parameters:
    ///   - location: the server and database.
    ///   - logger: postgres-nio's logger (quiet by default).
    /// - Throws: ``StoreError`` (`unreachable` when the server cannot be reached; `newer-schema`).
    public init(location: PostgresLocation, logger: Logger = Logger(label: "pushbridge.postgres", factory: { _ in SwiftLogNoOpLogHandler() })) throws {
        self.location = location
        session = try PostgresSession(configuration: location.configuration, target: location.description, logger: logger)
        try Self.migrate(session)
    }

    /// The identifiers of the migrations the database has, in the order applied.
    public func appliedMigrations() throws -> [String] {
        try lock.withLock {
            try session.query("SELECT identifier FROM pushbridge_migrations ORDER BY position").map { try $0.decode(String.self) }
        }
    }
}
