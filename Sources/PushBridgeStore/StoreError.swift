/// A failure of the state store itself (not bad input): it carries its code and its context.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure; the set may grow.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case sqlite
            case busy
            case readOnly = "read-only"
            case unexpectedValue = "unexpected-value"
            case newerSchema = "newer-schema"
            case postgres
            case unreachable
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// SQLite reported an error (see ``StoreError/sqliteCode``).
        public static let sqlite = Code(.sqlite)
        /// Another writer held the database past the busy timeout and every retry.
        public static let busy = Code(.busy)
        /// A change was attempted inside `PushStateStore/read(_:)`.
        public static let readOnly = Code(.readOnly)
        /// A stored value PushBridge did not write (a hand-edited or foreign database).
        public static let unexpectedValue = Code(.unexpectedValue)
        /// The database was migrated by a newer PushBridge: it has migrations this one does not know.
        public static let newerSchema = Code(.newerSchema)
        /// PostgreSQL reported an error (see ``StoreError/sqlState``).
        public static let postgres = Code(.postgres)
        /// The database server could not be reached, or the connection to it broke.
        public static let unreachable = Code(.unreachable)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// SQLite's extended result code, when SQLite reported the failure.
    public var sqliteCode: Int32?
    /// PostgreSQL's SQLSTATE, when PostgreSQL reported the failure.
    public var sqlState: String?
    /// What went wrong, in words.
    public var message: String
    /// The SQL statement or the stored field involved, when there is one.
    public var context: String?

    /// Creates a store error.
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: what went wrong.
    ///   - sqliteCode: SQLite's extended result code, if any.
    ///   - context: the statement or field involved.
    public init(_ code: Code, _ message: String, sqliteCode: Int32? = nil, context: String? = nil) {
        self.code = code
        self.message = message
        self.sqliteCode = sqliteCode
        self.context = context
    }

    /// A change asked of a read transaction (every store's transactions refuse it alike).
    package static let changeInReadTransaction = StoreError(.readOnly, "a change inside a read transaction")

    public var description: String {
        var text = "store error [\(code)"
        if let sqliteCode { text += " \(sqliteCode)" }
        if let sqlState { text += " \(sqlState)" }
        text += "]: " + message
        if let context { text += " (in: \(context))" }
        return text
    }
}
