import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import PushBridgeStore
import Synchronization

/// A count shared by threads: statements sent to the server (each a round trip: what the round-trip
/// budget of a send is measured by, `PostgresRoundTripTests`), waits that passed their deadline.
final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// One PostgreSQL connection used synchronously: the store protocol is synchronous (SQLite's
/// shape), so each call waits for postgres-nio's future on the calling thread, which is never an
/// event loop (the service's writer threads and the thread pool).
package final class PostgresSession: @unchecked Sendable {
    let connection: PostgresConnection
    let logger: Logger
    /// Where it is connected, for errors (no password).
    let target: String
    /// How long one statement may take; past it the connection is closed and the call fails as `unreachable`.
    let deadline: TimeAmount
    /// Counts the statements sent (a pool's, shared by its connections), or `nil`.
    var counter: StatementCounter?
    /// The schema its `search_path` names (set by ``PostgresPool``; `nil`: none set, or unknown).
    var schema: String?

    /// Connects.
    /// - Parameters:
    ///   - configuration: host, port, user, password, database.
    ///   - target: how errors name the server.
    ///   - logger: postgres-nio's logger.
    init(configuration: PostgresConnection.Configuration, target: String, logger: Logger) throws {
        self.target = target
        self.logger = logger
        deadline = configuration.options.connectTimeout
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        do {
            let connecting = PostgresConnection.connect(on: eventLoop, configuration: configuration, id: 1, logger: logger)
            connection = try Self.wait(connecting, deadline: deadline) {
                // A connection made after the deadline is closed as soon as it exists.
                connecting.whenSuccess { late in late.close().whenComplete { _ in withExtendedLifetime(late) {} } }
            }
        } catch {
            throw StoreError(.unreachable, "cannot connect to PostgreSQL at \(target): \(Self.describe(error))", context: target)
        }
    }

    deinit { closeNow() }

    /// Closes the connection without waiting (a broken session is dropped); the connection is
    /// kept until its channel has closed.
    func closeNow() {
        isDiscarded = true
        let connection = connection
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// Whether the connection is gone (the server closed it, or a deadline passed): a broken
    /// session is never used again.
    var isBroken: Bool { isDiscarded || connection.isClosed }
    /// Closed here (a failed rollback, a dropped connection): never used again.
    private(set) var isDiscarded = false

    /// Runs a statement and returns its rows; at most ``deadline``, after which the connection is
    /// closed and the call throws `unreachable`.
    @discardableResult
    func query(_ query: PostgresQuery) throws -> [PostgresRow] {
        // postgres-nio does not fail a query on a closed connection: it would wait for the deadline.
        // One closed here may not be closed yet: it takes no statement either.
        guard !isBroken else {
            throw StoreError(.unreachable, "PostgreSQL at \(target): the connection is closed", context: target)
        }
        counter?.add()
        do {
            let connection = connection
            let result = try Self.wait(connection.query(query, logger: logger), deadline: deadline) { connection.close().whenComplete { _ in withExtendedLifetime(connection) {} } }
            return Array(result.rows)
        } catch {
            throw Self.storeError(error, target: target)
        }
    }

    /// Connects without holding a thread: ``init(configuration:target:logger:)``, awaited.
    static func connect(configuration: PostgresConnection.Configuration, target: String, logger: Logger) async throws -> PostgresSession {
        let deadline = configuration.options.connectTimeout
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        do {
            let connecting = Self.connecting(on: eventLoop, configuration: configuration, logger: logger)
            let connection = try await Self.value(of: connecting, deadline: deadline) {
                connecting.whenSuccess { late in late.close().whenComplete { _ in withExtendedLifetime(late) {} } }
            }
            return PostgresSession(connection: connection, target: target, deadline: deadline, logger: logger)
        } catch {
            throw StoreError(.unreachable, "cannot connect to PostgreSQL at \(target): \(Self.describe(error))", context: target)
        }
    }

    /// postgres-nio's connection attempt, as a future (the async overload would not be bounded by ``deadline``).
    private static func connecting(on eventLoop: any EventLoop, configuration: PostgresConnection.Configuration, logger: Logger) -> EventLoopFuture<PostgresConnection> {
        PostgresConnection.connect(on: eventLoop, configuration: configuration, id: 1, logger: logger)
    }

    private init(connection: PostgresConnection, target: String, deadline: TimeAmount, logger: Logger) {
        self.connection = connection
        self.target = target
        self.deadline = deadline
        self.logger = logger
    }

    /// ``query(_:)`` without holding a thread: the statement's answer is awaited, at most ``deadline``.
    @discardableResult
    func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
        guard !isBroken else {
            throw StoreError(.unreachable, "PostgreSQL at \(target): the connection is closed", context: target)
        }
        counter?.add()
        do {
            let connection = connection
            let result = try await Self.value(of: connection.query(query, logger: logger), deadline: deadline) {
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
        future.cascade(to: promise)
        let timer = future.eventLoop.scheduleTask(in: deadline) {
            promise.fail(DeadlinePassed(seconds: Double(deadline.nanoseconds) / 1e9))
            onTimeout()
        }
        return (promise.futureResult, timer)
    }

    /// No answer within a deadline.
    struct DeadlinePassed: Error, CustomStringConvertible {
        var seconds: Double
        var description: String { "no answer within \(seconds) s" }
    }

    /// Waits for a future at most `deadline` (never on an event loop: callers are writer threads
    /// and the thread pool); past it, runs `onTimeout` and throws ``DeadlinePassed``.
    package static func wait<T: Sendable>(_ future: EventLoopFuture<T>, deadline: TimeAmount, onTimeout: @escaping @Sendable () -> Void) throws -> T {
        let (bounded, timer) = bound(future, deadline: deadline, onTimeout: onTimeout)
        defer { timer.cancel() }
        return try bounded.wait()
    }

    /// ``execute(_:)`` without holding a thread.
    func execute(_ sql: String) async throws {
        for statement in Self.statements(sql) { try await query(statement) }
    }

    /// Runs statements without parameters (a migration's script), one by one: each ends with `;` at
    /// the end of a line (none of PushBridge's contains one elsewhere).
    func execute(_ sql: String) throws {
        for statement in Self.statements(sql) { try query(statement) }
    }

    /// A script's statements: each ends with `;` at the end of a line.
    private static func statements(_ sql: String) -> [PostgresQuery] {
        sql.components(separatedBy: ";\n").compactMap { statement in
            let text = statement.trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : PostgresQuery(unsafeSQL: text.hasSuffix(";") ? String(text.dropLast()) : text)
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
