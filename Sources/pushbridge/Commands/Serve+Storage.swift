import PushBridgeEasemob
import PushBridgeServer
import PushBridgeTencent
import PushBridgePostgres
import PushBridgeStore

extension Serve {
    /// The storage backends `pushbridge serve` offers besides SQLite files and memory: `store`
    /// names one by its URL scheme. A new backend is one module and one entry here.
    static let storageBackends: [any StorageBackend] = [PostgresStorageBackend()]

    /// The vendor REST families `pushbridge serve` answers at the vendors' own paths. A new vendor is
    /// one module and one entry here.
    static let vendors: [VendorRESTFamily] = [.easemob, .tencent]
}
