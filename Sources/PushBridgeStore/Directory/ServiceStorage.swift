import Foundation

/// Where a service keeps its apps: the directory of apps and vendor bindings, and each app's state.
///
/// The executable builds one from its configuration (``SQLiteServiceStorage``, `PostgresServiceStorage`
/// in PushBridgePostgres, or ``MemoryServiceStorage``) and hands it to the service, which opens an
/// app's store when a request first needs it and closes it when the app has been idle; tests hand
/// the service a twin.
public protocol ServiceStorage: Sendable {
    /// Opens the directory of apps (once, when the service starts).
    /// - Throws: ``StoreError`` when it cannot be opened (or the file system's error for a data
    ///   directory that cannot be made); a storage over the network may instead
    ///   open it unreachable and say so on each call.
    func openDirectory() throws -> any AppDirectory

    /// Opens one app's store (on a thread that may block; never on an event loop). A storage over
    /// the network (``isShared``) may refuse: it opens its stores awaited.
    /// - Parameter app: the app id (as the directory holds it: letters, digits, `_`, `-` and `.`).
    /// - Throws: ``StoreError`` when the store cannot be opened.
    func openStore(forApp app: String) throws -> any PushStateStore

    /// Opens one app's store, awaited: a storage over the network holds no thread while it answers;
    /// one of files opens it on the calling thread (the service calls it on its blocking-I/O pool).
    /// - Parameter app: the app id.
    /// - Throws: ``StoreError`` when the store cannot be opened.
    func openStoreAwaited(forApp app: String) async throws -> any PushStateStore

    /// Whether several service nodes share this storage over the network: the directory is read
    /// again when a node does not know an app, a delivery claim lapses rather than being ended at
    /// start (another node may hold it), and a write is answered by its deadline even while its
    /// commit has not ended (a database can stop answering).
    var isShared: Bool { get }

    /// Whether the apps' state lives only in this process's memory: closing an idle app would lose
    /// it, so every app stays open.
    var isVolatile: Bool { get }

    /// Whether the storage answers now (`/readyz`), awaited.
    func isReachable() async -> Bool

    /// Its connections to a database server now (`/metrics`), or `nil` when it has none (files, memory).
    func connections() -> StorageConnections?

    /// Runs its connections to a database server while the service runs (a service of the
    /// service's `ServiceGroup`: a client's pool), until the service shuts down gracefully — after
    /// the stores are closed — or the task is cancelled; returns at once when it has none.
    func run() async
}

extension ServiceStorage {
    public var isShared: Bool { false }
    public var isVolatile: Bool { false }
    public func isReachable() async -> Bool { true }
    public func openStoreAwaited(forApp app: String) async throws -> any PushStateStore { try openStore(forApp: app) }
    public func connections() -> StorageConnections? { nil }
    public func run() async {}
}

/// A node's connections to its database server, for `/metrics`.
public struct StorageConnections: Sendable, Hashable {
    /// Connections open now (idle, in use or being made).
    public var open: Int
    /// The most it opens.
    public var limit: Int
    /// Statements sent since the node started (each a round trip).
    public var statements: Int
    /// Uses that found every connection busy for the deadline (each answered 503 `busy`).
    public var exhausted: Int

    public init(open: Int, limit: Int, statements: Int, exhausted: Int) {
        self.open = open
        self.limit = limit
        self.statements = statements
        self.exhausted = exhausted
    }
}

/// One SQLite file per app (`apps/<app>.sqlite`) and the directory in `service.sqlite`, in one data
/// directory that only this process uses.
public struct SQLiteServiceStorage: ServiceStorage {
    /// The data directory.
    public let path: String
    /// Durability of every app store.
    public let synchronous: SQLiteStateStore.Options.Synchronous

    /// - Parameters:
    ///   - path: the data directory (created, with `apps/`, when missing).
    ///   - synchronous: SQLite's durability setting for every app store.
    public init(path: String, synchronous: SQLiteStateStore.Options.Synchronous = .normal) {
        self.path = path
        self.synchronous = synchronous
    }

    public func openDirectory() throws -> any AppDirectory {
        try FileManager.default.createDirectory(atPath: path + "/apps", withIntermediateDirectories: true)
        return try SQLiteAppDirectory(path: path + "/service.sqlite")
    }

    public func openStore(forApp app: String) throws -> any PushStateStore {
        try SQLiteStateStore(path: "\(path)/apps/\(app).sqlite", options: .init(synchronous: synchronous))
    }
}

/// Apps and their state in memory, gone with the process (`--db :memory:`; tests).
public struct MemoryServiceStorage: ServiceStorage {
    public init() {}

    public func openDirectory() throws -> any AppDirectory { MemoryAppDirectory() }

    public func openStore(forApp app: String) throws -> any PushStateStore { MemoryStateStore() }

    public var isVolatile: Bool { true }
}
