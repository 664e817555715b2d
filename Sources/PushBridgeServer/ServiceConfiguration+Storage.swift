import PushBridgePostgres
import PushBridgeStore

extension ServiceConfiguration {
    /// The storage this configuration names: PostgreSQL (`store: postgres://…`), state in memory
    /// (`db: :memory:`) or SQLite files in the data directory.
    /// - Throws: a store error when PostgreSQL's directory cannot be prepared (an unreachable
    ///   server is no error: the node starts and says 503 until it answers).
    public func storage() throws -> any ServiceStorage {
        if let postgres = postgresWithDeadline { return try PostgresServiceStorage(location: postgres, connections: postgresConnections) }
        if isInMemory { return MemoryServiceStorage() }
        return SQLiteServiceStorage(path: database, synchronous: synchronous)
    }

    /// The PostgreSQL location with the deadline of one statement or connection attempt: half the
    /// request timeout, at most 5 s, so a request whose database stopped answering gets its 503
    /// within `request-timeout-seconds`.
    var postgresWithDeadline: PostgresLocation? {
        guard var location = postgres else { return nil }
        location.deadline = .milliseconds(Int64(min(5, max(0.2, requestTimeoutSeconds / 2)) * 1000))
        return location
    }
}
