import Foundation
import NIOCore
import PushBridgeStore

/// PostgreSQL as a service's storage: `store: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`
/// (several nodes share it). The executable lists it among the backends it offers.
public struct PostgresStorageBackend: StorageBackend {
    public init() {}

    public var schemes: [String] { ["postgres", "postgresql"] }

    public var urlForm: String { "a PostgreSQL URL postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE" }

    public func describe(url: String) throws -> String { try location(url).description }

    /// The service's storage: the directory in schema `pushbridge_service`, each app in a schema of its own.
    public func storage(url: String, settings: StorageSettings) throws -> any ServiceStorage {
        var location = try location(url)
        location.deadline = .milliseconds(Int64((settings.deadlineSeconds * 1000).rounded()))
        return try PostgresServiceStorage(location: location, connections: settings.connections)
    }

    /// The location a URL names, or what the URL lacks as a `StorageURLError`.
    private func location(_ url: String) throws -> PostgresLocation {
        do {
            return try PostgresLocation(url: url)
        } catch let error as PostgresLocationError {
            throw StorageURLError(expected: "\(urlForm) (\(error.expected))")
        }
    }
}

extension StoreURL {
    /// The `store` setting that names a PostgreSQL location (its password too).
    /// - Parameter location: the server and database.
    public init(_ location: PostgresLocation) throws {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = location.user
        components.password = location.password
        components.host = location.host
        components.port = location.port
        components.path = "/" + location.database
        if let schema = location.schema { components.queryItems = [URLQueryItem(name: "schema", value: schema)] }
        try self.init(components.string ?? "", backends: [PostgresStorageBackend()])
    }
}
