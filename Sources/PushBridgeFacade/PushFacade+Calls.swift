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
    public func apply(_ call: JSONValue, dialect: String, user: UserID, at: Instant, pointer: JSONPointer = .root) throws -> JSONValue? {
        try apply([DialectCall(call, at: at, pointer: pointer)], dialect: dialect, user: user).first ?? nil
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
    public func apply(_ calls: [DialectCall], dialect: String, user: UserID) throws -> [JSONValue?] {
        try write(applying(calls, dialect: dialect, user: user))
    }

    /// `apply(_:dialect:user:)`, awaited: the store reads the app and the users the calls involve,
    /// the calls are applied to what was read, and the store commits the changed users
    /// (`PushStateStore.update(reading:deciding:)`).
    /// - Returns: one entry per call: the query result, or `nil` for a setting call.
    public func apply(_ calls: [DialectCall], dialect: String, user: UserID) async throws -> [JSONValue?] {
        try await update(applying(calls, dialect: dialect, user: user))
    }

    /// Names what calls read — the app, the caller, and each well-formed user a call names in its
    /// `user` parameter (a name card's member; one that breaks ``IdentifierRule`` is refused when its
    /// call is applied, and never read) — and applies them to what was read. Pure.
    private func applying(_ calls: [DialectCall], dialect: String, user: UserID) throws -> PlannedUpdate<[JSONValue?]> {
        let adapter = try adapter(dialect)
        try Self.checkUser(user)
        var keys = StateKeys()
        keys.addApp()
        var users = [user: keys.addUser(user)]
        for item in calls {
            if let named = Self.namedUser(in: item.call), users[named] == nil, IdentifierRule.violation(in: named) == nil {
                users[named] = keys.addUser(named)
            }
        }
        return PlannedUpdate(keys: keys) { [users] in try Self.apply(calls, adapter: adapter, user: user, users: users, in: $0) }
    }

    /// The user a call names in its `user` parameter (a name card's member), if any.
    private static func namedUser(in call: JSONValue) -> UserID? {
        guard case .object(let object) = call, case .string(let named)? = object["user"], !named.isEmpty else { return nil }
        return named
    }

    /// Applies calls to what was read: each query answered, each setting applied, in order; the
    /// users that changed (and the caller, whom a call configures) are the changes. Pure.
    /// - Parameters:
    ///   - users: each involved user's position in `snapshot.users`.
    /// - Throws: `InputError` for a rejected call (then nothing is written).
    private static func apply(
        _ calls: [DialectCall], adapter: any DialectAdapter, user: UserID, users positions: [UserID: Int], in snapshot: StateSnapshot
    ) throws -> (changes: StateChanges, outcome: [JSONValue?]) {
        var world = PushWorld(app: snapshot.app ?? AppConfiguration())
        var stored: [UserID: UserState] = [:]
        var results: [JSONValue?] = []
        for item in calls {
            let (call, pointer) = (item.call, item.pointer)
            let name = try adapter.callName(of: call, at: pointer)
            // A call changes its caller, or the user its `user` parameter names (name cards).
            var involved = [user]
            if let named = namedUser(in: call) {
                // Checked before it is used: a store never sees an id that breaks the rule.
                try IdentifierRule.check(named, at: pointer / "user", what: "the member whose name card is set")
                involved.append(named)
            }
            for id in involved where world.users[id] == nil {
                let record = snapshot.users[positions[id]!]
                world.users[id] = state(of: record, user: id, adapter: adapter)
                if record?.isConfigured == true { stored[id] = record!.state }
            }
            let context = CallContext(caller: user, at: item.at)
            if adapter.queryCalls.contains(name) {
                results.append(try adapter.query(call, at: pointer, in: world, context: context))
            } else {
                try adapter.apply(call, at: pointer, to: &world, context: context)
                for id in involved { if let state = world.users[id] { try checkStoredText(of: state, at: pointer) } }
                results.append(nil)
            }
        }
        // Save what changed, and the caller even unchanged: a call configures its caller.
        var changes = StateChanges()
        for (id, state) in world.users.sorted(by: { $0.key < $1.key }) where stored[id] != state {
            if id != user && stored[id] == nil && state == Self.state(of: nil, user: id, adapter: adapter) { continue }
            changes.users.append(StateChanges.UserChange(state: state, previous: stored[id]))
        }
        return (changes, results)
    }

    /// Changes a user's state directly: what no dialect call sets (presence in the Easemob
    /// dialects, the time zone, the badge counter), as a server learns it.
    /// - Parameters:
    ///   - user: the user.
    ///   - dialect: whose defaults a new user gets.
    ///   - change: the change.
    public func updateUser(_ user: UserID, dialect: String, _ change: (inout UserState) throws -> Void) throws {
        let adapter = try adapter(dialect)
        try Self.checkUser(user)
        try store.write { transaction in
            let record = try transaction.user(user)
            var state = Self.state(of: record, user: user, adapter: adapter)
            try change(&state)
            try Self.checkStoredText(of: state, at: .root)
            try transaction.save(state, replacing: record?.isConfigured == true ? record?.state : nil)
        }
    }

    /// Registers a user with the dialect's defaults, as a vendor's account registration does (the
    /// vendors' REST: Easemob `POST /users`, Tencent `account_import`).
    /// - Parameters:
    ///   - user: the user.
    ///   - dialect: whose defaults the user gets.
    /// - Returns: `false` (and nothing changes) when a call, a setting or an earlier registration already configured the user.
    @discardableResult
    public func register(_ user: UserID, dialect: String) throws -> Bool {
        let adapter = try adapter(dialect)
        try Self.checkUser(user)
        return try store.write { transaction in
            let record = try transaction.user(user)
            if record?.isConfigured == true { return false }
            try transaction.save(Self.state(of: record, user: user, adapter: adapter), replacing: nil)
            return true
        }
    }

    /// Sets a user's presence as a server learns it from its connections. Becoming online resets the
    /// badge counter (Specification §10).
    /// - Parameters:
    ///   - presence: the new presence.
    ///   - user: a user the store knows (a call, a device or a group membership); another is bad input.
    ///   - dialect: whose defaults a user known only as a group member gets.
    public func setPresence(_ presence: Presence, of user: UserID, dialect: String) throws {
        let adapter = try adapter(dialect)
        try Self.checkUser(user)
        try store.write { transaction in
            guard let record = try transaction.user(user) else {
                throw InputError(.unknownReference, at: JSONPointer.root / "user",
                    expected: "a user the store knows (one that made a call or is a group member)", found: "\"\(user)\"")
            }
            var state = Self.state(of: record, user: user, adapter: adapter)
            state.setPresence(presence)
            try transaction.save(state, replacing: record.isConfigured ? record.state : nil)
        }
    }

    /// Removes a device, whoever has it (the server API or APNs feedback, Specification §10).
    /// - Parameters:
    ///   - token: the device token (hex; any case).
    ///   - user: when given, the device is removed only if this user holds it (a server's per-user route).
    /// - Returns: the user that had it.
    @discardableResult
    public func removeDevice(token: String, ownedBy user: UserID? = nil) throws -> UserID {
        let token = token.lowercased()
        return try store.write { transaction in
            guard let owner = try transaction.owner(ofDevice: token), user == nil || owner == user, let record = try transaction.user(owner) else {
                throw InputError(.unknownReference, at: JSONPointer.root / "token",
                    expected: user.map { "a device token bound to user \"\($0)\"" } ?? "a device token bound to a user", found: "\"\(token)\"")
            }
            var state = record.state
            state.removeDevice(token: token)
            try transaction.save(state, replacing: record.state)
            return owner
        }
    }

    /// A user's stored state, `nil` when the store has never heard of the user.
    public func user(_ user: UserID) throws -> UserRecord? {
        try store.read { try $0.user(user) }
    }

    /// Whether the store has heard of a user (configured or not): what ``user(_:)`` tells by `nil`,
    /// without loading the user's devices and settings (a send's receivers and senders are kept
    /// between writes, so a send to a user just checked reads nothing twice).
    /// - Parameter user: the user.
    public func knowsUser(_ user: UserID) throws -> Bool {
        try store.read { try $0.exists(.user(user)) }
    }

    /// Answers a query call from the store.
    /// - Parameters:
    ///   - query: `{"call": name, …params}`.
    ///   - dialect: the dialect whose query it is (any dialect reads the same canonical state).
    ///   - user: whose state is read.
    ///   - now: the instant the query is made (expiries).
    ///   - pointer: where the query is in its document (for errors).
    public func query(_ query: JSONValue, dialect: String, user: UserID, now: Instant, pointer: JSONPointer = .root) throws -> JSONValue {
        let adapter = try adapter(dialect)
        _ = try adapter.queryName(of: query, at: pointer)
        return try store.read { transaction in
            let world = PushWorld(app: try transaction.app(), users: [user: Self.state(of: try transaction.user(user), user: user, adapter: adapter)])
            return try adapter.query(query, at: pointer, in: world, context: CallContext(caller: user, at: now))
        }
    }
}
