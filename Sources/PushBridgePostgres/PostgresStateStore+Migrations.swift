import PostgresNIO
import PushBridgeStore

// Applying the schema's migrations (``PostgresStateStore/migrations``) to a database.

extension PostgresStateStore {
    /// The identifiers of every migration this PushBridge knows, oldest first.
    public static var migrationIdentifiers: [String] { migrations.map(\.identifier) }

    /// Applies the migrations the database lacks, in one transaction under an advisory lock, so
    /// nodes starting together migrate once; the lacking ones and their records are one block, sent
    /// in one exchange.
    static func migrate(_ session: PostgresLease, scope: String, migrations: [Migration] = PostgresStateStore.migrations) async throws {
        try await session.execute("BEGIN")
        do {
            try await migrateInTransaction(session, scope: scope, migrations: migrations)
            try await session.execute("COMMIT")
        } catch {
            try await rollBack(session)
            throw error
        }
    }

    /// ``migrate(_:scope:migrations:)`` inside a transaction the caller began (and ends).
    static func migrateInTransaction(_ session: PostgresLease, scope: String, migrations: [Migration] = PostgresStateStore.migrations) async throws {
        // The first key spells "PBMG"; the second is the schema's.
        try await session.query("SELECT pg_advisory_xact_lock(1346522439, hashtext(\(scope)))")
        try await session.execute(
            "CREATE TABLE IF NOT EXISTS pushbridge_migrations (identifier text PRIMARY KEY, applied_at bigint NOT NULL, position bigserial)")
        let applied = Set(try await session.query("SELECT identifier FROM pushbridge_migrations").map { try $0.decode(String.self) })
        let known = Set(migrations.map(\.identifier))
        if let unknown = applied.subtracting(known).sorted().first {
            throw StoreError(.newerSchema, "the database has migration \"\(unknown)\", which this PushBridge does not know; use a newer PushBridge",
                context: session.target)
        }
        // Identifiers are this file's constants (letters, digits and dashes): spelled in the block.
        let lacking = migrations.filter { !applied.contains($0.identifier) }
        try await session.run(scripts: lacking.map { migration in
            migration.sql + ";\nINSERT INTO pushbridge_migrations (identifier, applied_at) VALUES ('\(migration.identifier)', (extract(epoch from now()) * 1000)::bigint);\n"
        })
    }
}
