import PushBridgeCore
import PushBridgeStore

// The synchronous calls, for command-line tools and tests: a store opened synchronously blocks the
// calling thread while each statement is awaited on a queue of its own; a store a service opened
// refuses them.

extension PostgresStateStore {
    /// The waits of a store opened synchronously: one for the call, one for each statement its
    /// synchronous body sends (on another queue: the call's is blocked by the body meanwhile).
    struct BlockingWaits {
        let calls = BlockingWait()
        let statements = BlockingWait()
    }

    /// The waits, or the refusal of a store whose calls are awaited only.
    private func waits() throws -> BlockingWaits {
        guard let blocking else {
            throw StoreError(
                .postgres, "this PostgreSQL store answers awaited calls only: a synchronous call would hold a thread while the server answers",
                context: location.description)
        }
        return blocking
    }

    public func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        let waits = try waits()
        return try waits.calls.run {
            await gate.enter()
            defer { gate.leave() }
            return try await inWriteTransaction(readingRecordsOf: []) { transaction in
                try body(BlockingTransaction(transaction, wait: waits.statements))
            }
        }
    }

    public func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        let waits = try waits()
        return try waits.calls.run { try await reading { try body(BlockingTransaction($0, wait: waits.statements)) } }
    }

    /// The identifiers of the migrations the database has, in the order applied.
    public func appliedMigrations() throws -> [String] {
        try waits().calls.run { try await appliedMigrations() }
    }

    /// Runs an awaited call for a synchronous caller (tools and tests), blocking its thread, or refuses.
    func synchronously<T>(_ work: () async throws -> T) throws -> T {
        try waits().calls.run(work)
    }
}

/// A transaction's tables for a synchronous body: each call blocks the body's thread while its
/// statements are awaited on the wait's queue.
final class BlockingTransaction: PushStateTransaction {
    let base: PostgresStateStore.Transaction
    let wait: BlockingWait

    init(_ base: PostgresStateStore.Transaction, wait: BlockingWait) {
        self.base = base
        self.wait = wait
    }

    func read(_ keys: StateKeys) throws -> StateSnapshot { try wait.run { try await base.read(keys) } }
    func commit(_ changes: StateChanges) throws { try wait.run { try await base.commit(changes) } }

    func app() throws -> AppConfiguration { try wait.run { try await base.app() } }
    func setApp(_ app: AppConfiguration) throws { try wait.run { try await base.setApp(app) } }

    func user(_ id: UserID) throws -> UserRecord? { try wait.run { try await base.user(id) } }
    func sender(_ id: UserID, group: String?) throws -> UserState? { try wait.run { try await base.sender(id, group: group) } }
    func save(_ state: UserState, replacing previous: UserState?) throws { try wait.run { try await base.save(state, replacing: previous) } }
    func receivers(of audience: Audience, excluding sender: UserID, conversation: ConversationKey) throws -> StoredReceivers {
        try wait.run { try await base.receivers(of: audience, excluding: sender, conversation: conversation) }
    }
    func setBadges(_ badges: [(key: UserKey, badge: Int)]) throws {
        try writeSendEffects(badges: badges, deliveries: [], records: [], forgettingBefore: Instant(milliseconds: .min))
    }
    func removeUser(_ id: UserID) throws -> Bool { try wait.run { try await base.removeUser(id) } }
    func owner(ofDevice token: String) throws -> UserID? { try wait.run { try await base.owner(ofDevice: token) } }
    func pushBindings(of user: UserID) throws -> [PushBinding] { try wait.run { try await base.pushBindings(of: user) } }
    func setPushBindings(_ bindings: [PushBinding], of user: UserID) throws { try wait.run { try await base.setPushBindings(bindings, of: user) } }

    func members(of group: String) throws -> [UserID] { try wait.run { try await base.members(of: group) } }
    func setMembers(_ members: [UserID], of group: String) throws { try wait.run { try await base.setMembers(members, of: group) } }
    func groupProfile(of group: String) throws -> [UInt8]? { try wait.run { try await base.groupProfile(of: group) } }
    func setGroupProfile(_ profile: [UInt8]?, of group: String) throws { try wait.run { try await base.setGroupProfile(profile, of: group) } }
    func messageSequence(of group: String, advancing: Bool) throws -> Int64 { try wait.run { try await base.messageSequence(of: group, advancing: advancing) } }
    func groups(containing user: UserID?) throws -> [String] { try wait.run { try await base.groups(containing: user) } }

    func sentMessage(_ id: String, since cutoff: Instant) throws -> [UInt8]? { try wait.run { try await base.sentMessage(id, since: cutoff) } }
    func sentMessages(_ ids: [(id: String, since: Instant)]) throws -> [[UInt8]?] { try wait.run { try await base.sentMessages(ids) } }
    func recordSentMessage(_ id: String, at instant: Instant, decisions: [UInt8], forgettingBefore cutoff: Instant) throws {
        try recordSentMessages([SentMessage(id: id, sentAt: instant, decisions: decisions)], forgettingBefore: cutoff)
    }
    func recordSentMessages(_ messages: [SentMessage], forgettingBefore cutoff: Instant) throws {
        try wait.run { try await base.recordSentMessages(messages, forgettingBefore: cutoff) }
    }
    func storeRoll(_ roll: ReceiverRoll, usedAt: Instant, encoded: () -> [UInt8]) throws -> Int64 {
        try wait.run { try await base.storeRoll(roll, usedAt: usedAt, encoded: encoded) }
    }
    func roll(_ id: Int64) throws -> [UInt8]? { try wait.run { try await base.roll(id) } }

    func writeSendEffects(badges: [(key: UserKey, badge: Int)], deliveries: [OutboxDelivery], records: [SentMessage], forgettingBefore cutoff: Instant) throws {
        try wait.run { try await base.writeSendEffects(badges: badges, deliveries: deliveries, records: records, forgettingBefore: cutoff) }
    }
    func enqueueDeliveries(_ deliveries: [OutboxDelivery]) throws {
        try writeSendEffects(badges: [], deliveries: deliveries, records: [], forgettingBefore: Instant(milliseconds: .min))
    }
    func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int) throws -> [OutboxDelivery] {
        try wait.run { try await base.claimDeliveries(dueBy: now, claimUntil: claimUntil, limit: limit) }
    }
    func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) throws { try wait.run { try await base.settleDeliveries(settlements, at: now) } }
    func releaseDeliveryClaims() throws { try wait.run { try await base.releaseDeliveryClaims() } }
    func nextDeliveryDue() throws -> Instant? { try wait.run { try await base.nextDeliveryDue() } }
    func deliveries(ofMessage id: String) throws -> [DeliveryRecord] { try wait.run { try await base.deliveries(ofMessage: id) } }
    func pruneDeliveries(settledBefore cutoff: Instant) throws -> Int { try wait.run { try await base.pruneDeliveries(settledBefore: cutoff) } }
    func outboxCounts() throws -> OutboxCounts { try wait.run { try await base.outboxCounts() } }
}
