import Crypto
import Foundation
import PushBridgeStore

/// The service's apps on one PostgreSQL database that several nodes share: the directory in schema
/// `pushbridge_service`, each app's state in a schema of its own (``schema(ofApp:)``).
public struct PostgresServiceStorage: ServiceStorage {
    /// The server and database, with the deadline of one statement or connection attempt.
    public let location: PostgresLocation
    private let directory: PostgresAppDirectory

    /// Connects the directory (a database that cannot be reached now is no error: a node may start
    /// while its database is down, and every call tries again).
    /// - Parameter location: the server and database; its `deadline` bounds each statement.
    /// - Throws: `StoreError` (`newer-schema`, `postgres`).
    public init(location: PostgresLocation) throws {
        self.location = location
        directory = try PostgresAppDirectory(location: location)
    }

    public func openDirectory() throws -> any AppDirectory { directory }

    public func openStore(forApp app: String) throws -> any PushStateStore {
        try PostgresStateStore(location: try location.inSchema(Self.schema(ofApp: app)))
    }

    public var isShared: Bool { true }

    public func isReachable() -> Bool { directory.isReachable() }

    /// The PostgreSQL schema of an app's state: `app_`, the id lower-cased with characters other
    /// than a–z, 0–9 and `_` as `_` (at most 40 of them), `_`, and 8 hex digits of the id's SHA-256,
    /// so ids that differ only in case or punctuation get schemas of their own.
    /// - Parameter id: the app id.
    public static func schema(ofApp id: String) -> String {
        let readable = String(id.lowercased().unicodeScalars.prefix(40).map { ("a"..."z").contains($0) || ("0"..."9").contains($0) ? Character($0) : "_" })
        let digest = SHA256.hash(data: Data(id.utf8)).prefix(4).map { String(format: "%02x", $0) }.joined()
        return "app_" + readable + "_" + digest
    }
}
