import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import PushBridgeStore

/// One PostgreSQL connection used synchronously: the store protocol is synchronous (SQLite's
/// shape), so each call waits for postgres-nio's future on the calling thread, which is never an
/// event loop (the service's writer threads and the thread pool).
final class PostgresSession: @unchecked Sendable {
    let connection: PostgresConnection
    let logger: Logger
    /// Where it is connected, for errors (no password).
    let target: String

    /// Connects.
    /// - Parameters:
    ///   - configuration: host, port, user, password, database.
    ///   - target: how errors name the server.
    ///   - logger: postgres-nio's logger.
    init(configuration: PostgresConnection.Configuration, target: String, logger: Logger) throws {
        self.target = target
        self.logger = logger
        do {
            connection = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 1, logger: logger
            ).wait()
        } catch {
            throw StoreError(.unreachable, "cannot connect to PostgreSQL at \(target): \(Self.describe(error))", context: target)
        }
    }

    deinit { try? connection.close().wait() }

    /// Runs a statement and returns its rows.
    @discardableResult
    func query(_ query: PostgresQuery) throws -> [PostgresRow] {
        do {
            let result = try connection.query(query, logger: logger).wait()
            return Array(result.rows)
        } catch {
            throw Self.storeError(error, target: target)
        }
    }

    /// Runs statements without parameters (a migration's script), one by one: each ends with `;` at
    /// the end of a line (none of PushBridge's contains one elsewhere).
    func execute(_ sql: String) throws {
        for statement in sql.components(separatedBy: ";\n") {
            let text = statement.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { continue }
            try query(PostgresQuery(unsafeSQL: text.hasSuffix(";") ? String(text.dropLast()) : text))
        }
    }

    /// A store error for a PostgreSQL error: its SQLSTATE and message, never a parameter value.
    static func storeError(_ error: any Error, target: String) -> StoreError {
        if let error = error as? PSQLError, let code = error.serverInfo?[.sqlState] {
            let message = error.serverInfo?[.message] ?? ""
            var storeError = StoreError(code == "40001" || code == "40P01" ? .busy : .postgres, message, context: target)
            storeError.sqlState = code
            return storeError
        }
        return StoreError(.unreachable, "PostgreSQL at \(target): \(describe(error))", context: target)
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError { return "\(error.code)" }
        return String(describing: error).prefix(200).description
    }
}
