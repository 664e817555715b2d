import Dispatch
import PushBridgeCore
import Synchronization

/// An app the service knows: its id and the SHA-256 hash of its access key (never the key).
public struct RegisteredApp: Hashable, Sendable {
    /// The app id (the `{app}` of the service's paths).
    public var id: String
    /// SHA-256 of the app's access key.
    public var keyHash: [UInt8]
    /// When the app was registered.
    public var createdAt: Instant

    /// - Parameters:
    ///   - id: the app id.
    ///   - keyHash: SHA-256 of the access key.
    ///   - createdAt: when it was registered.
    public init(id: String, keyHash: [UInt8], createdAt: Instant) {
        self.id = id
        self.keyHash = keyHash
        self.createdAt = createdAt
    }
}

/// Where the service keeps its apps and their key hashes, awaited: a directory over the network
/// (PostgreSQL's) holds no thread while it answers, a local one (``SQLiteAppDirectory``) runs each
/// call on a queue of its own. ``MemoryAppDirectory`` is their twin.
public protocol AppDirectory: AnyObject, Sendable {
    /// Every registered app, oldest first.
    func apps() async throws -> [RegisteredApp]
    /// Registers an app.
    /// - Parameter app: the new app.
    /// - Returns: `false` (and nothing changes) when the id is taken.
    func register(_ app: RegisteredApp) async throws -> Bool
    /// Every vendor binding, by app then vendor.
    func vendorBindings() async throws -> [VendorBinding]
    /// Binds vendor credentials to an app, replacing the app's binding for that vendor.
    /// - Parameter binding: the new binding.
    /// - Returns: `false` (and nothing changes) when another app holds the same vendor key.
    func bind(_ binding: VendorBinding) async throws -> Bool
    /// Removes an app's binding for a vendor.
    /// - Parameters:
    ///   - app: the app.
    ///   - vendor: the vendor family.
    /// - Returns: whether there was one.
    func unbind(app: String, vendor: VendorBinding.Vendor) async throws -> Bool
    /// One registered app, read by its id (a node that does not know an app another node created
    /// reads that one row, not the whole directory).
    /// - Parameter id: the app id.
    /// - Returns: the app, or `nil` when none has that id.
    func app(_ id: String) async throws -> RegisteredApp?
}

/// A directory only this process writes, in its own file or memory: the service reads it whole,
/// synchronously, when it starts, and never again (nobody else changes it).
package protocol LocalAppDirectory: AppDirectory {
    /// Every registered app, oldest first, read now.
    func apps() throws -> [RegisteredApp]
    /// Every vendor binding, by app then vendor, read now.
    func vendorBindings() throws -> [VendorBinding]
}

/// The in-memory twin of ``SQLiteAppDirectory``.
public final class MemoryAppDirectory: LocalAppDirectory {
    private let registered = Mutex<[RegisteredApp]>([])
    private let bindings = Mutex<[VendorBinding]>([])

    /// An empty directory.
    public init() {}

    package func apps() throws -> [RegisteredApp] { registered.withLock { $0 } }

    public func apps() async throws -> [RegisteredApp] { registered.withLock { $0 } }

    public func app(_ id: String) async throws -> RegisteredApp? { registered.withLock { $0.first { $0.id == id } } }

    public func register(_ app: RegisteredApp) async throws -> Bool {
        registered.withLock { apps in
            guard !apps.contains(where: { $0.id == app.id }) else { return false }
            apps.append(app)
            return true
        }
    }

    package func vendorBindings() throws -> [VendorBinding] { sortedBindings }

    public func vendorBindings() async throws -> [VendorBinding] { sortedBindings }

    /// Every binding, by app then vendor.
    private var sortedBindings: [VendorBinding] {
        bindings.withLock { $0.sorted { ($0.app, $0.vendor.rawValue) < ($1.app, $1.vendor.rawValue) } }
    }

    public func bind(_ binding: VendorBinding) async throws -> Bool {
        bindings.withLock { list in
            if list.contains(where: { $0.vendor == binding.vendor && $0.key == binding.key && $0.app != binding.app }) { return false }
            list.removeAll { $0.app == binding.app && $0.vendor == binding.vendor }
            list.append(binding)
            return true
        }
    }

    public func unbind(app: String, vendor: VendorBinding.Vendor) async throws -> Bool {
        bindings.withLock { list in
            let before = list.count
            list.removeAll { $0.app == app && $0.vendor == vendor }
            return list.count != before
        }
    }
}
