import Foundation
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore

/// The multi-vendor facade: dialect calls and messages in, one decision per receiver out, with
/// every receiver's push state kept in a `PushStateStore`.
///
/// Each method is one store transaction: a call or message that is rejected (bad input, a store
/// failure) changes nothing. Bad input throws `InputError` naming the pointer and what was expected.
public struct PushFacade: Sendable {
    public let store: any PushStateStore
    public let registry: DialectRegistry
    /// How long a sent message id is remembered: a send of the same id within this time returns
    /// the first send's decisions and changes nothing (Specification §10). At least 24 hours.
    public let repeatWindowSeconds: Int64

    /// The shortest repeat window Specification §10 allows, and the default: 24 hours.
    public static let minimumRepeatWindowSeconds: Int64 = 86_400
    /// Whether a send queues one outbox delivery per pushed device, in its own transaction (Specification
    /// §13): on for a service that delivers to APNs, off for deciding only.
    public let queuesDeliveries: Bool

    /// - Parameters:
    ///   - store: where state lives (`SQLiteStateStore` or `MemoryStateStore`).
    ///   - registry: the dialects the facade understands.
    ///   - repeatWindowSeconds: how long sent message ids are remembered (raised to 24 hours when shorter).
    ///   - queuesDeliveries: whether sends queue their deliveries in the store's outbox (every
    ///     dialect message has an id, which the deliveries are found by).
    public init(
        store: any PushStateStore, registry: DialectRegistry = .standard, repeatWindowSeconds: Int64 = minimumRepeatWindowSeconds,
        queuesDeliveries: Bool = false
    ) {
        self.store = store
        self.registry = registry
        self.repeatWindowSeconds = max(repeatWindowSeconds, Self.minimumRepeatWindowSeconds)
        self.queuesDeliveries = queuesDeliveries
    }

    /// One receiver's decision for a sent message: the core's `ReceiverDecision` (PushBridgeCore).
    public typealias ReceiverDecision = PushBridgeCore.ReceiverDecision

    /// The dialect adapter for an id, or bad input at `pointer`.
    public func adapter(_ dialect: String, at pointer: JSONPointer = .root) throws -> any DialectAdapter {
        try registry.adapter(dialect, at: pointer)
    }

    // MARK: App

    /// Replaces the app configuration (certificates that `apnsCertName` / `busiId` refer to, templates).
    public func configure(_ app: AppConfiguration) async throws {
        try await edit(EditScope()) { try $0.configure(app) }
    }

    /// The stored app configuration.
    public func app() async throws -> AppConfiguration {
        try await reading(EditScope(app: true)) { try $0.app() }
    }

    // MARK: Helpers

    /// The state a call or message sees: the stored one, or the dialect's defaults for a user
    /// that no call has configured yet (keeping what the store knows: the time zone).
    static func state(of record: UserRecord?, user: UserID, adapter: any DialectAdapter) -> UserState {
        if let record, record.isConfigured { return record.state }
        return adapter.newUser(user, timeZone: record?.state.timeZone ?? UserState.utc)
    }

    /// A user id: non-empty and following ``IdentifierRule``.
    static func checkUser(_ user: UserID, at pointer: JSONPointer = .root) throws {
        guard !user.isEmpty else { throw InputError(.invalidValue, at: pointer, expected: "a non-empty user id", found: "an empty string") }
        try IdentifierRule.check(user, at: pointer, what: "a user id")
    }

    /// A group id: non-empty and following ``IdentifierRule``.
    static func checkGroup(_ group: String, at pointer: JSONPointer = .root) throws {
        guard !group.isEmpty else { throw InputError(.invalidValue, at: pointer, expected: "a non-empty group id", found: "an empty string") }
        try IdentifierRule.check(group, at: pointer, what: "a group id")
    }
}
