import PushBridgePostgres
import PushBridgeStore

extension Serve {
    /// The storage backends `pushbridge serve` offers besides SQLite files and memory: `store`
    /// names one by its URL scheme. A new backend is one module and one entry here.
    static let storageBackends: [any StorageBackend] = [PostgresStorageBackend()]
}
