import Foundation

/// A kind of storage a service can keep its apps in besides the built-in ones (SQLite files, memory),
/// chosen by the scheme of the `store` setting's URL. A module that provides one (PushBridgePostgres)
/// adds a type conforming to this; the executable lists the backends it offers, and the service
/// knows only ``ServiceStorage``.
public protocol StorageBackend: Sendable {
    /// The URL schemes that choose it, lower case (`postgres`, `postgresql`).
    var schemes: [String] { get }

    /// The shape of its URL, for errors and help (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`).
    var urlForm: String { get }

    /// Checks a `store` URL of one of its schemes, and describes it without its secrets.
    /// - Parameter url: the URL as configured (it may hold a password).
    /// - Returns: the URL as logs and summaries may show it.
    /// - Throws: ``StorageURLError`` saying what was expected, never repeating the URL.
    func describe(url: String) throws -> String

    /// Builds the storage a URL names (connecting lazily: a database that is down is no error).
    /// - Parameters:
    ///   - url: a URL ``describe(url:)`` accepted.
    ///   - settings: the service's limits on its connections.
    /// - Throws: ``StorageURLError`` for a bad URL, or ``StoreError``.
    func storage(url: String, settings: StorageSettings) throws -> any ServiceStorage
}

/// What a service asks of a storage over the network.
public struct StorageSettings: Sendable, Hashable {
    /// The most connections one node opens, for every app and the directory together.
    public var connections: Int
    /// How long one statement, connection attempt or wait for a free connection may take.
    public var deadlineSeconds: Double

    /// - Parameters:
    ///   - connections: the most connections a node opens.
    ///   - deadlineSeconds: the longest wait for one statement or connection.
    public init(connections: Int, deadlineSeconds: Double) {
        self.connections = connections
        self.deadlineSeconds = deadlineSeconds
    }
}

/// A `store` URL a backend cannot use: what was expected, never the URL (it may hold a password).
public struct StorageURLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the URL lacks or should look like.
    public var expected: String

    /// - Parameter expected: what the URL lacks or should look like.
    public init(expected: String) { self.expected = expected }

    public var description: String { "bad store URL: expected \(expected)" }
}

/// The `store` setting: a URL naming a ``StorageBackend`` by its scheme. The URL may hold a
/// password: only ``description`` (what the backend says of it) is ever shown.
public struct StoreURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL as configured (secret).
    public let url: String
    /// Its scheme, lower case.
    public let scheme: String
    /// The URL without its secrets.
    public let description: String

    /// Checks a URL with the backend its scheme names.
    /// - Parameters:
    ///   - url: the configured URL.
    ///   - backends: the backends this build offers.
    /// - Throws: ``StorageURLError`` (an unknown scheme, or what the backend expected).
    public init(_ url: String, backends: [any StorageBackend]) throws {
        let scheme = url.firstRange(of: "://").map { url[..<$0.lowerBound].lowercased() } ?? ""
        guard let backend = Self.backend(serving: scheme, among: backends) else {
            let forms = backends.map(\.urlForm)
            throw StorageURLError(expected: forms.isEmpty ? "sqlite (this build has no other store)" : "sqlite, or " + forms.joined(separator: ", or "))
        }
        self.url = url
        self.scheme = scheme
        description = try backend.describe(url: url)
    }

    /// The storage it names, built by its backend.
    /// - Parameters:
    ///   - backends: the backends this build offers (one of them serves ``scheme``).
    ///   - settings: the service's limits on connections.
    public func storage(from backends: [any StorageBackend], settings: StorageSettings) throws -> any ServiceStorage {
        guard let backend = Self.backend(serving: scheme, among: backends) else {
            throw StorageURLError(expected: "a store this build offers (none serves \(scheme)://)")
        }
        return try backend.storage(url: url, settings: settings)
    }

    /// The first of `backends` whose schemes include `scheme`.
    private static func backend(serving scheme: String, among backends: [any StorageBackend]) -> (any StorageBackend)? {
        backends.first { $0.schemes.contains(scheme) }
    }
}
