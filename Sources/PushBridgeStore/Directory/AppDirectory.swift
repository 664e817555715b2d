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

/// Where the service keeps its apps and their key hashes. ``SQLiteAppDirectory`` persists them;
/// ``MemoryAppDirectory`` is its twin.
public protocol AppDirectory: AnyObject, Sendable {
    /// Every registered app, oldest first.
    func apps() throws -> [RegisteredApp]
    /// Registers an app.
    /// - Parameter app: the new app.
    /// - Returns: `false` (and nothing changes) when the id is taken.
    func register(_ app: RegisteredApp) throws -> Bool
}

/// The in-memory twin of ``SQLiteAppDirectory``.
public final class MemoryAppDirectory: AppDirectory {
    private let registered = Mutex<[RegisteredApp]>([])

    /// An empty directory.
    public init() {}

    public func apps() throws -> [RegisteredApp] { registered.withLock { $0 } }

    public func register(_ app: RegisteredApp) throws -> Bool {
        registered.withLock { apps in
            guard !apps.contains(where: { $0.id == app.id }) else { return false }
            apps.append(app)
            return true
        }
    }
}
