import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import PushBridgeStore
import Synchronization

/// One use of a connection the node's `PostgresConnections` leased. Every statement is awaited
/// and bounded by the deadline: no thread waits for the server.
final class PostgresLease: @unchecked Sendable {
    let connection: PostgresConnection
    /// Where it is connected, for errors (no password).
    let target: String
    /// How long one statement may take; past it the connection is closed and the call fails as `unreachable`.
    let deadline: TimeAmount
    /// Counts the statements sent (the node's, shared by its connections).
    let counter: StatementCounter
    /// Why it was closed here, when a statement's deadline passed (the statement's start, no values).
    private var closedBecause: String?
    private let setSchema: (String?) -> Void

    /// The schema the connection's `search_path` names (`nil`: none set, or unknown); kept with the
    /// connection for its next lease.
    var schema: String? {
        didSet { setSchema(schema) }
    }

    init(connection: PostgresConnection, target: String, deadline: TimeAmount, counter: StatementCounter, setSchema: @escaping (String?) -> Void) {
        self.connection = connection
        self.target = target
        self.deadline = deadline
        self.counter = counter
        self.setSchema = setSchema
    }

    /// Closes the connection without waiting (one that cannot roll back, or past its deadline): the
    /// client connects another in its place.
    func closeNow() {
        let connection = connection
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// Whether the connection is gone (the server closed it, or a deadline passed).
    var isBroken: Bool { connection.isClosed }

    /// The statements' logger (postgres-nio logs failures the store reports itself).
    private static let quiet = Logger(label: "pushbridge.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs a statement and returns its rows, awaited; at most ``deadline``, after which the
    /// connection is closed and the call throws `unreachable`.
    @discardableResult
    func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
        guard !isBroken else {
            throw StoreError(.unreachable, "PostgreSQL at \(target): the connection is closed\(closedBecause.map { " (\($0))" } ?? "")", context: target)
        }
        counter.add()
        do {
            let connection = connection
            let result = try await Self.value(of: connection.query(query, logger: Self.quiet), deadline: deadline) { [weak self] in
                self?.closedBecause = "no answer within the deadline to \(query.sql.prefix(60))…"
                connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
            }
            return Array(result.rows)
        } catch {
            throw Self.storeError(error, target: target)
        }
    }

    /// Awaits a future at most `deadline`; past it, runs `onTimeout` and throws ``DeadlinePassed``.
    static func value<T: Sendable>(of future: EventLoopFuture<T>, deadline: TimeAmount, onTimeout: @escaping @Sendable () -> Void) async throws -> T {
        let (bounded, timer) = bound(future, deadline: deadline, onTimeout: onTimeout)
        defer { timer.cancel() }
        return try await bounded.get()
    }

    /// `future`, failed with ``DeadlinePassed`` (after `onTimeout` runs) when it has not ended by
    /// `deadline`; and the timer to cancel once it has.
    private static func bound<T: Sendable>(_ future: EventLoopFuture<T>, deadline: TimeAmount, onTimeout: @escaping @Sendable () -> Void) -> (EventLoopFuture<T>, Scheduled<Void>) {
        let promise = future.eventLoop.makePromise(of: T.self)
        let timer = future.eventLoop.scheduleTask(in: deadline) {
            promise.fail(DeadlinePassed(seconds: Double(deadline.nanoseconds) / 1e9))
            onTimeout()
        }
        // Ended on the event loop when the answer comes, not when the awaiting task next runs: a task
        // that waits for a thread past the deadline must not find its connection closed.
        future.whenComplete { result in
            timer.cancel()
            promise.completeWith(result)
        }
        return (promise.futureResult, timer)
    }

    /// No answer within a deadline.
    struct DeadlinePassed: Error, CustomStringConvertible {
        var seconds: Double
        var description: String { "no answer within \(seconds) s" }
    }

    /// Runs statements without parameters (a migration's script), one by one, awaited: each ends
    /// with `;` at the end of a line (none of PushBridge's contains one elsewhere).
    func execute(_ sql: String) async throws {
        for statement in Self.statements(sql) { try await query(PostgresQuery(unsafeSQL: statement)) }
    }

    /// Runs a script of statements without parameters (migrations) in one round trip: a PL/pgSQL
    /// block of its statements, in the session's transaction. A schema of a hundred statements is
    /// made in one exchange, not a hundred (each of which waits for the client's next turn).
    /// - Parameter scripts: scripts whose statements each end with `;` at the end of a line, none
    ///   holding the block's quote `$pushbridge_script$`.
    func run(scripts: [String]) async throws {
        let statements = scripts.flatMap { Self.statements($0) }
        guard !statements.isEmpty else { return }
        let body = statements.map { $0 + ";\n" }.joined()
        try await query(PostgresQuery(unsafeSQL: "DO $pushbridge_script$ BEGIN\n" + body + "END $pushbridge_script$"))
    }

    /// A script's statements: each ends with `;` at the end of a line.
    private static func statements(_ sql: String) -> [String] {
        sql.components(separatedBy: ";\n").compactMap { statement in
            let text = statement.trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : text.hasSuffix(";") ? String(text.dropLast()) : text
        }
    }

    /// A store error for a PostgreSQL error: its SQLSTATE and message, never a parameter value.
    static func storeError(_ error: any Error, target: String) -> StoreError {
        if let error = error as? PSQLError, let code = error.serverInfo?[.sqlState] {
            let message = error.serverInfo?[.message] ?? ""
            // 08…: connection exceptions; 57P01–57P03: the server is shutting down or starting
            // (a restart, pg_terminate_backend): the connection is gone, not the request wrong.
            let gone = code.hasPrefix("08") || code == "57P01" || code == "57P02" || code == "57P03"
            var storeError = StoreError(code == "40001" || code == "40P01" ? .busy : gone ? .unreachable : .postgres, message, context: target)
            storeError.sqlState = code
            return storeError
        }
        return StoreError(.unreachable, "PostgreSQL at \(target): \(describe(error))", context: target)
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            // The server's own message ("the database system is starting up"), or what failed below
            // (a refused connection); never the query or its bindings.
            if let message = error.serverInfo?[.message] { return "\(error.code): \(message)" }
            if let underlying = error.underlying { return "\(error.code): \(String(describing: underlying).prefix(200))" }
            return "\(error.code)"
        }
        return String(describing: error).prefix(200).description
    }
}
