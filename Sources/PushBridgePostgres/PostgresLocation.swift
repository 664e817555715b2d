import Foundation
import PostgresNIO

/// Where a PostgreSQL store lives, read from a URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?schema=NAME]`.
/// With a schema, the store's tables live in that schema (created when missing): several stores
/// (the apps of one service, or tests) share one database.
/// TLS is not used (keep the database on loopback or a private network); the password, if any,
/// never appears in ``description`` or in errors.
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    /// The schema holding the store's tables; `public` when none is named.
    public var schema: String?

    /// Reads a `postgres://` (or `postgresql://`) URL.
    /// - Throws: ``PostgresLocationError`` naming what is missing or malformed.
    public init(url text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme) else {
            throw PostgresLocationError(expected: "a URL postgres://USER@HOST:PORT/DATABASE")
        }
        guard let host = components.host, !host.isEmpty else { throw PostgresLocationError(expected: "a host in the URL") }
        guard let user = components.user, !user.isEmpty else { throw PostgresLocationError(expected: "a user in the URL (postgres://USER@…)") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw PostgresLocationError(expected: "a database name as the URL's path") }
        if let port = components.port, !(1...65_535).contains(port) { throw PostgresLocationError(expected: "a port from 1 to 65535") }
        self.host = host
        self.port = components.port ?? 5432
        self.user = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        for item in components.queryItems ?? [] {
            guard item.name == "schema", let value = item.value else {
                throw PostgresLocationError(expected: "no query parameter but schema (found \(item.name))")
            }
            try Self.checkSchema(value)
            schema = value
        }
    }

    /// Checks a schema name: lower-case letters, digits and `_`, starting with a letter or `_`, at most 63 bytes.
    public static func checkSchema(_ name: String) throws {
        guard let first = name.utf8.first, name.utf8.count <= 63, first == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first),
            name.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { throw PostgresLocationError(expected: "a schema name of a-z, 0-9 and _ (at most 63, not starting with a digit)") }
    }

    /// This location with its tables in `schema`.
    public func inSchema(_ schema: String) throws -> PostgresLocation {
        try Self.checkSchema(schema)
        var copy = self
        copy.schema = schema
        return copy
    }

    /// `postgres://USER@HOST:PORT/DATABASE`, without the password.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" + (schema.map { "?schema=" + $0 } ?? "") }

    /// How long one connection attempt or one statement may take before PushBridge gives up on
    /// the connection (it is closed, and the next use connects anew): never an unbounded wait.
    public var deadline: TimeAmount = .seconds(5)

    package var configuration: PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: .disable)
        configuration.options.connectTimeout = deadline
        return configuration
    }
}

/// A store URL that cannot be used; says what was expected, never echoes the URL (it may hold a password).
public struct PostgresLocationError: Error, Hashable, Sendable, CustomStringConvertible {
    public var expected: String
    public var description: String { "bad PostgreSQL URL: expected \(expected)" }
}
