import Foundation
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore

// Dialect calls: apply, register, presence, devices, queries.
extension PushFacade {
    /// Applies one dialect call on behalf of a user, atomically.
    ///
    /// A query call changes nothing and returns its result (Specification §9 "Query results").
    /// - Parameters:
    ///   - call: `{"call": name, …params}` in the dialect's vocabulary (no `at`).
    ///   - dialect: the dialect id.
    ///   - user: the caller.
    ///   - at: when the call is made (durations start then).
    ///   - pointer: where the call is in its document, for errors.
    /// - Returns: the query result for a query call, `nil` for a setting call.
    @discardableResult
    public func apply(_ call: JSONValue, dialect: String, user: UserID, at: Instant, pointer: JSONPointer = .root) async throws -> JSONValue? {
        try await apply([DialectCall(call, at: at, pointer: pointer)], dialect: dialect, user: user).first ?? nil
    }

    /// One call with when it is made and where it is in its document.
    public struct DialectCall: Sendable {
        public var call: JSONValue
        public var at: Instant
        public var pointer: JSONPointer
        public init(_ call: JSONValue, at: Instant, pointer: JSONPointer) {
            self.call = call
            self.at = at
            self.pointer = pointer
        }
    }

    /// Applies several calls of one user in one transaction: all of them, or (when one is rejected) none.
    /// - Returns: one entry per call: the query result, or `nil` for a setting call.
    public func apply(_ calls: [DialectCall], dialect: String, user: UserID) async throws -> [JSONValue?] {
        try await update(applying(calls, dialect: dialect, user: user))
    }

    /// Names what calls read — the app, the caller, and each well-formed user a call names in its
    /// `user` parameter (a name card's member; one that breaks ``IdentifierRule`` is refused when its
    /// call is applied, and never read) — and applies them to what was read. Pure.
    private func applying(_ calls: [DialectCall], dialect: String, user: UserID) throws -> PlannedUpdate<[JSONValue?]> {
        _ = try adapter(dialect)
        try Self.checkUser(user)
        return editing(Self.scope(of: calls, user: user)) { try $0.apply(calls, dialect: dialect, user: user) }
    }

    /// What applying `calls` for `user` reads: the app, the caller and each well-formed user a call
    /// names in its `user` parameter.
    public static func scope(of calls: [DialectCall], user: UserID) -> EditScope {
        var users = [user]
        for item in calls {
            if let named = namedUser(in: item.call), !users.contains(named), IdentifierRule.violation(in: named) == nil { users.append(named) }
        }
        return EditScope(app: true, users: users)
    }

    /// The user a call names in its `user` parameter (a name card's member), if any.
    static func namedUser(in call: JSONValue) -> UserID? {
        guard case .object(let object) = call, case .string(let named)? = object["user"], !named.isEmpty else { return nil }
        return named
    }

    /// Changes a user's state directly: what no dialect call sets (presence in the Easemob
    /// dialects, the time zone, the badge counter), as a server learns it.
    /// - Parameters:
    ///   - user: the user.
    ///   - dialect: whose defaults a new user gets.
    ///   - change: the change.
    public func updateUser(_ user: UserID, dialect: String, _ change: @escaping @Sendable (inout UserState) throws -> Void) async throws {
        try await edit(EditScope(users: [user])) { try $0.updateUser(user, dialect: dialect, change) }
    }

    /// Registers a user with the dialect's defaults, as a vendor's account registration does (the
    /// vendors' REST: Easemob `POST /users`, Tencent `account_import`).
    /// - Parameters:
    ///   - user: the user.
    ///   - dialect: whose defaults the user gets.
    /// - Returns: `false` (and nothing changes) when a call, a setting or an earlier registration already configured the user.
    @discardableResult
    public func register(_ user: UserID, dialect: String) async throws -> Bool {
        try await edit(EditScope(users: [user])) { try $0.register(user, dialect: dialect) }
    }

    /// Sets a user's presence as a server learns it from its connections. Becoming online resets the
    /// badge counter (Specification §10).
    /// - Parameters:
    ///   - presence: the new presence.
    ///   - user: a user the store knows (a call, a device or a group membership); another is bad input.
    ///   - dialect: whose defaults a user known only as a group member gets.
    /// - Returns: the user's record after the change.
    @discardableResult
    public func setPresence(_ presence: Presence, of user: UserID, dialect: String) async throws -> UserRecord {
        try await edit(EditScope(users: [user])) { edit in
            try edit.setPresence(presence, of: user, dialect: dialect)
            return try edit.user(user)!
        }
    }

    /// Removes a device, whoever has it (the server API or APNs feedback, Specification §10).
    /// - Parameters:
    ///   - token: the device token (hex; any case).
    ///   - user: when given, the device is removed only if this user holds it (a server's per-user route).
    /// - Returns: the user that had it.
    @discardableResult
    public func removeDevice(token: String, ownedBy user: UserID? = nil) async throws -> UserID {
        try await edit(EditScope(devices: [token])) { try $0.removeDevice(token: token, ownedBy: user) }
    }

    /// A user's stored state, `nil` when the store has never heard of the user.
    public func user(_ user: UserID) async throws -> UserRecord? {
        try await reading(EditScope(users: [user])) { try $0.user(user) }
    }

    /// Whether the store has heard of a user (configured or not): what ``user(_:)`` tells by `nil`,
    /// without loading the user's devices and settings (a send's receivers and senders are kept
    /// between writes, so a send to a user just checked reads nothing twice).
    /// - Parameter user: the user.
    public func knowsUser(_ user: UserID) async throws -> Bool {
        try await exists(.user(user))
    }

    /// Answers a query call from the store.
    /// - Parameters:
    ///   - query: `{"call": name, …params}`.
    ///   - dialect: the dialect whose query it is (any dialect reads the same canonical state).
    ///   - user: whose state is read.
    ///   - now: the instant the query is made (expiries).
    ///   - pointer: where the query is in its document (for errors).
    public func query(_ query: JSONValue, dialect: String, user: UserID, now: Instant, pointer: JSONPointer = .root) async throws -> JSONValue {
        try await reading(EditScope(app: true, users: [user])) { try $0.query(query, dialect: dialect, user: user, now: now, pointer: pointer) }
    }
}
