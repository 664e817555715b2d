import Foundation
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore

/// The multi-vendor facade: dialect calls and messages in, one decision per receiver out, with
/// every receiver's push state kept in a ``PushStateStore``.
///
/// Each method is one store transaction: a call or message that is rejected (bad input, a store
/// failure) changes nothing. Bad input throws ``InputError`` naming the pointer and what was expected.
public struct PushFacade: Sendable {
    public let store: any PushStateStore
    public let registry: DialectRegistry
    /// How long a sent message id is remembered: a send of the same id within this time returns
    /// the first send's decisions and changes nothing (SPEC §10). At least 24 hours.
    public let repeatWindowSeconds: Int64

    /// The shortest repeat window SPEC §10 allows, and the default: 24 hours.
    public static let minimumRepeatWindowSeconds: Int64 = 86_400
    /// Whether a send queues one outbox delivery per pushed device, in its own transaction (SPEC
    /// §13): on for a service that delivers to APNs, off for deciding only.
    public let queuesDeliveries: Bool

    /// - Parameters:
    ///   - store: where state lives (``SQLiteStateStore`` or ``MemoryStateStore``).
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

    /// One receiver's decision for a sent message.
    public struct ReceiverDecision: Hashable, Sendable {
        public var receiver: UserID
        public var decision: PushDecision

        /// `{"receiver":"u2","push":true,…}`: the decision JSON with the receiver first.
        public var json: [UInt8] {
            var w = JSONWriter(capacity: 600)
            w.raw("{\"receiver\":")
            w.string(receiver)
            w.raw(",")
            for b in decision.json.dropFirst() { w.byte(b) }
            return w.bytes
        }
    }

    /// The dialect adapter for an id, or bad input at `pointer`.
    public func adapter(_ dialect: String, at pointer: JSONPointer = .root) throws -> any DialectAdapter {
        try registry.adapter(dialect, at: pointer)
    }

    // MARK: App

    /// Replaces the app configuration (certificates that `apnsCertName` / `busiId` refer to, templates).
    public func configure(_ app: AppConfiguration) throws {
        try Self.checkStoredText(of: app)
        try store.write { try $0.setApp(app) }
    }

    /// The stored app configuration.
    public func app() throws -> AppConfiguration {
        try store.read { try $0.app() }
    }

    // MARK: Calls

    /// Applies one dialect call on behalf of a user, atomically.
    ///
    /// A query call changes nothing and returns its result (SPEC §9 "Query results").
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
        let adapter = try adapter(dialect)
        try Self.checkUser(user)
        return try store.write { transaction in
            var world = PushWorld(app: try transaction.app())
            var stored: [UserID: UserState] = [:]
            var results: [JSONValue?] = []
            for item in calls {
                let (call, pointer) = (item.call, item.pointer)
                let name = try adapter.callName(of: call, at: pointer)
                // A call changes its caller, or the user its `user` parameter names (name cards).
                var involved = [user]
                if case .object(let object) = call, case .string(let named)? = object["user"], !named.isEmpty {
                    // Checked before it is read: a store must never see an id that breaks the rule.
                    try IdentifierRule.check(named, at: pointer / "user", what: "the member whose name card is set")
                    involved.append(named)
                }
                for id in involved where world.users[id] == nil {
                    let record = try transaction.user(id)
                    world.users[id] = Self.state(of: record, user: id, adapter: adapter)
                    if record?.isConfigured == true { stored[id] = record!.state }
                }
                let context = CallContext(caller: user, at: item.at)
                if adapter.queryCalls.contains(name) {
                    results.append(try adapter.query(call, at: pointer, in: world, context: context))
                } else {
                    try adapter.apply(call, at: pointer, to: &world, context: context)
                    for id in involved { if let state = world.users[id] { try Self.checkStoredText(of: state, at: pointer) } }
                    results.append(nil)
                }
            }
            // Save what changed, and the caller even unchanged: a call configures its caller.
            for (id, state) in world.users.sorted(by: { $0.key < $1.key }) where stored[id] != state {
                if id != user && stored[id] == nil && state == Self.state(of: nil, user: id, adapter: adapter) { continue }
                try transaction.save(state, replacing: stored[id])
            }
            return results
        }
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
    /// badge counter (SPEC §10).
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

    /// Removes a device, whoever has it (the server API or APNs feedback, SPEC §10).
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

    /// Answers a query call from the store.
    /// - Parameters:
    ///   - query: `{"call": name, …params}`.
    ///   - dialect: the dialect whose query it is (any dialect reads the same canonical state).
    ///   - user: whose state is read.
    ///   - now: the instant the query is made (expiries).
    public func query(_ query: JSONValue, dialect: String, user: UserID, now: Instant, pointer: JSONPointer = .root) throws -> JSONValue {
        let adapter = try adapter(dialect)
        _ = try adapter.queryName(of: query, at: pointer)
        return try store.read { transaction in
            let world = PushWorld(app: try transaction.app(), users: [user: Self.state(of: try transaction.user(user), user: user, adapter: adapter)])
            return try adapter.query(query, at: pointer, in: world, context: CallContext(caller: user, at: now))
        }
    }

    // MARK: Groups

    /// Replaces a group's members (the order is kept: it is the order decisions come in).
    /// - Parameters:
    ///   - members: distinct, non-empty user ids.
    ///   - group: the group id.
    public func setMembers(_ members: [UserID], of group: String) throws {
        try Self.checkMembers(members, of: group)
        try store.write { try $0.setMembers(members, of: group) }
    }

    static func checkMembers(_ members: [UserID], of group: String) throws {
        try checkGroup(group)
        var seen = Set<UserID>()
        for (i, member) in members.enumerated() {
            try Self.checkUser(member, at: JSONPointer.root / i)
            guard seen.insert(member).inserted else {
                throw InputError(.invalidValue, at: JSONPointer.root / i, expected: "each member once", found: "\"\(member)\" again")
            }
        }
    }

    /// A group's members in order.
    public func members(of group: String) throws -> [UserID] {
        try store.read { try $0.members(of: group) }
    }

    /// Adds members at the end of a group, in order; users already in the group stay where they are.
    /// - Parameters:
    ///   - members: non-empty user ids, each listed once.
    ///   - group: the group id.
    /// - Returns: the members after the change.
    @discardableResult
    public func addMembers(_ members: [UserID], to group: String) throws -> [UserID] {
        try Self.checkMembers(members, of: group)
        return try store.write { transaction in
            var all = try transaction.members(of: group)
            let present = Set(all)
            all += members.filter { !present.contains($0) }
            try transaction.setMembers(all, of: group)
            return all
        }
    }

    /// Removes one member from a group; the others keep their order.
    /// - Parameters:
    ///   - member: the user.
    ///   - group: the group id.
    /// - Returns: the members after the change.
    /// - Throws: ``InputError`` (`unknown-reference` at `/user`) when the user is not a member.
    @discardableResult
    public func removeMember(_ member: UserID, from group: String) throws -> [UserID] {
        try store.write { transaction in
            var all = try transaction.members(of: group)
            guard let index = all.firstIndex(of: member) else {
                throw InputError(.unknownReference, at: JSONPointer.root / "user", expected: "a member of group \"\(group)\"", found: "\"\(member)\"")
            }
            all.remove(at: index)
            try transaction.setMembers(all, of: group)
            return all
        }
    }

    /// Forgets a user: settings, devices, badge counter and group memberships.
    /// - Parameter user: the user.
    /// - Throws: ``InputError`` (`unknown-reference` at `/user`) when the store does not know the user.
    public func removeUser(_ user: UserID) throws {
        try store.write { transaction in
            guard try transaction.removeUser(user) else {
                throw InputError(.unknownReference, at: JSONPointer.root / "user", expected: "a user the store knows", found: "\"\(user)\"")
            }
        }
    }

    // MARK: Sending

    /// Decides a message for every receiver, and commits the pushed receivers' badge counters in
    /// the same transaction.
    ///
    /// A message id already sent within ``repeatWindowSeconds`` is not a second message: the first
    /// send's decisions come back byte for byte and no counter changes (SPEC §10). An empty id is
    /// never taken for a repeat.
    ///
    /// A one-to-one message goes to its target(s); a group message to every member except the
    /// sender, in membership order. Receivers the store does not know get the dialect's defaults
    /// (so: `no-device`).
    /// - Parameters:
    ///   - message: the message in the dialect's shape.
    ///   - dialect: the dialect id.
    ///   - now: when the message is sent.
    ///   - profile: the output shape (the dialect's own by default).
    ///   - sender: the sender, when the message does not name one (or to check it against).
    ///   - pointer: where the message is in its document.
    public func send(
        _ message: JSONValue, dialect: String, now: Instant, profile: Profile? = nil, sender: UserID? = nil, pointer: JSONPointer = .root
    ) throws -> [ReceiverDecision] {
        try sendMessage(message, dialect: dialect, now: now, profile: profile, sender: sender, pointer: pointer).decisions
    }

    /// What a send did: the message id, the decisions, and whether it was a repeat.
    public struct SendOutcome: Hashable, Sendable {
        /// The message id (empty when the message has none).
        public var messageID: String
        /// One decision per receiver, in audience order.
        public var decisions: [ReceiverDecision]
        /// The id was sent before (within the repeat window): these are the first send's decisions,
        /// and nothing was counted again.
        public var isRepeat: Bool
    }

    /// ``send(_:dialect:now:profile:sender:pointer:)``, also saying whether the message was a repeat.
    public func sendMessage(
        _ message: JSONValue, dialect: String, now: Instant, profile: Profile? = nil, sender: UserID? = nil, pointer: JSONPointer = .root
    ) throws -> SendOutcome {
        try send(try prepare(message, dialect: dialect, now: now, profile: profile, sender: sender, pointer: pointer))
    }

    /// A message read and checked, ready to send: everything about it that needs no stored state.
    public struct PreparedMessage: Sendable {
        /// The message in the canonical model.
        public var message: PushMessage
        /// Who it goes to.
        public var audience: Audience
        /// The sender.
        public var sender: UserID
        /// When it is sent.
        public var now: Instant
        /// The output shape.
        public var profile: Profile
        let adapter: any DialectAdapter
    }

    /// Reads and checks a dialect message without touching the store, so that a server can do it
    /// outside its writer; ``send(_:)`` then decides it in one transaction.
    /// - Parameters: as ``sendMessage(_:dialect:now:profile:sender:pointer:)``.
    /// - Throws: ``InputError`` for bad input.
    public func prepare(
        _ message: JSONValue, dialect: String, now: Instant, profile: Profile? = nil, sender: UserID? = nil, pointer: JSONPointer = .root
    ) throws -> PreparedMessage {
        let adapter = try adapter(dialect)
        let address = try adapter.address(of: message, at: pointer)
        guard let from = sender ?? address.sender else {
            throw InputError(.missingKey, at: pointer / "from", expected: "the sender: the message's own sender field, or --sender")
        }
        try Self.checkUser(from, at: pointer / "from")
        // The canonical message does not depend on the receiver; read it once.
        let firstReceiver: UserID
        switch address.audience {
        case .users(let users):
            // The adapters check their own fields with their pointers; this holds for any adapter.
            for user in users { try Self.checkUser(user, at: pointer) }
            firstReceiver = users.first { $0 != from } ?? users[0]
        case .group(let group):
            try Self.checkGroup(group, at: pointer)
            firstReceiver = group
        }
        let canonical = try adapter.message(message, at: pointer, context: MessageContext(sender: from, receiver: firstReceiver, now: now))
        try IdentifierRule.check(canonical.id, at: pointer / "id", what: "the message id")
        return PreparedMessage(message: canonical, audience: address.audience, sender: from, now: now, profile: profile ?? adapter.profile, adapter: adapter)
    }

    /// Decides a prepared message for every receiver and commits the counters, in one transaction
    /// (a repeated id: the first send's decisions, nothing counted).
    /// - Parameter prepared: from ``prepare(_:dialect:now:profile:sender:pointer:)``.
    public func send(_ prepared: PreparedMessage) throws -> SendOutcome {
        try store.write { transaction in
            var effects = SendEffects()
            let outcome = try decide(prepared, in: transaction, after: &effects)
            try effects.write(to: transaction)
            return outcome
        }
    }

    /// Sends several prepared messages in one write transaction (group commit): each message is
    /// decided and counted as ``send(_:)`` does, in order, each seeing the ones before it. A message
    /// that fails leaves nothing behind and the others are kept.
    ///
    /// The messages' counters, outbox rows and records are written together once all are decided
    /// (a few statements for the batch, no savepoint per message). When one fails, the transaction
    /// is rolled back and the batch decided again without it, so that nothing of it can remain.
    /// - Parameter batch: messages from ``prepare(_:dialect:now:profile:sender:pointer:)``.
    /// - Returns: one result per message, in order.
    /// - Throws: when the commit itself fails; then none of the messages was sent.
    public func send(_ batch: [PreparedMessage]) throws -> [Result<SendOutcome, any Error>] {
        var failures: [Int: any Error] = [:]
        while true {
            do {
                return try store.write { transaction in
                    // The batch's ids are looked up together, before any of its records is written.
                    let remembered = batch.indices.filter { failures[$0] == nil && !batch[$0].message.id.isEmpty }
                    var stored = [StoredRecord](repeating: .unread, count: batch.count)
                    let found = try transaction.sentMessages(remembered.map { (batch[$0].message.id, repeatCutoff(at: batch[$0].now)) })
                    for (i, record) in zip(remembered, found) { stored[i] = .read(record) }
                    var effects = SendEffects()
                    var results: [Result<SendOutcome, any Error>] = []
                    results.reserveCapacity(batch.count)
                    for (i, prepared) in batch.enumerated() {
                        if let failure = failures[i] {
                            results.append(.failure(failure))
                            continue
                        }
                        do {
                            results.append(.success(try decide(prepared, in: transaction, after: &effects, stored: stored[i])))
                        } catch {
                            throw FailedInBatch(index: i, error: error)
                        }
                    }
                    try effects.write(to: transaction)
                    return results
                }
            } catch let failed as FailedInBatch {
                failures[failed.index] = failed.error  // each round leaves one more out: at most batch.count + 1 rounds
            }
        }
    }

    /// A message of a batch failed: the batch's transaction is rolled back and run again without it.
    private struct FailedInBatch: Error {
        let index: Int
        let error: any Error
    }

    /// The first instant of the repeat window that ends at `now`: a record sent before it is forgotten.
    func repeatCutoff(at now: Instant) -> Instant { now.adding(seconds: -repeatWindowSeconds) }

    /// The same facade (dialects, repeat window, outbox) writing through another store: a group
    /// commit's writer, given the store of its savepoint.
    /// - Parameter store: the store to read and write through.
    public func writing(to store: any PushStateStore) -> PushFacade {
        PushFacade(store: store, registry: registry, repeatWindowSeconds: repeatWindowSeconds, queuesDeliveries: queuesDeliveries)
    }

    /// The decisions a message id was sent with, as the send returned them, or `nil` when no
    /// message with this id was sent within ``repeatWindowSeconds`` before `now`.
    /// - Parameters:
    ///   - id: the message id.
    ///   - now: the instant of the question (the window ends then).
    public func sentMessage(_ id: String, now: Instant) throws -> [ReceiverDecision]? {
        guard !id.isEmpty else { return nil }
        return try store.read { transaction in
            try transaction.sentMessage(id, since: repeatCutoff(at: now)).map {
                try SentMessageRecord.decode($0, messageID: id, roll: transaction.roll)
            }
        }
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
