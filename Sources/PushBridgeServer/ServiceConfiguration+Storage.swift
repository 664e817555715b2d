import PushBridgeStore

extension ServiceConfiguration {
    /// The storage this configuration names: a backend's (`store: <scheme>://…`), state in memory
    /// (`db: :memory:`) or SQLite files in the data directory. The service knows no backend: the
    /// executable passes the ones it offers.
    /// - Parameter backends: the storage backends this build offers (`StoreURL` names one of them).
    /// - Throws: a store error when the backend's directory cannot be prepared (an unreachable
    ///   server is no error: the node starts and says 503 until it answers).
    public func storage(from backends: [any StorageBackend]) throws -> any ServiceStorage {
        if let store { return try store.storage(from: backends, settings: storageSettings) }
        if isInMemory { return MemoryServiceStorage() }
        return SQLiteServiceStorage(path: database, synchronous: synchronous)
    }

    /// The limits a storage over the network gets: ``storeConnections``, and a deadline of one
    /// statement or connection attempt of half the request timeout, at most 5 s, so a request whose
    /// database stopped answering gets its 503 within `request-timeout-seconds`.
    public var storageSettings: StorageSettings {
        StorageSettings(connections: storeConnections, deadlineSeconds: min(5, max(0.2, requestTimeoutSeconds / 2)))
    }
}
