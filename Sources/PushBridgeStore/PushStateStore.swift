import Synchronization
import Dispatch
import PushBridgeCore

/// Where the facade keeps canonical push state: users, group membership and the app configuration.
///
/// Every change is ``update(reading:deciding:)``: what it reads is named up front, read in one
/// consistent snapshot, decided on (a pure function of the snapshot) and committed — all of it, or
/// (when the decision throws or the commit fails) none. Reads are ``snapshot(_:)``, the delivery
/// outbox is ``outbox``; every call is awaited. ``MemoryStateStore`` is the in-memory twin of
/// ``SQLiteStateStore``; both pass the same tests.
public protocol PushStateStore: AnyObject, Sendable {
    /// Reads `keys`, decides on what was read, and writes what was decided: one snapshot in, its
    /// changes out, atomically (read → decide → commit).
    ///
    /// `decide` is a pure function of the snapshot: it reads nothing else and changes nothing but
    /// what it returns. A store may call it again with a newer snapshot when what it read moved
    /// before the commit; it never hands it the store.
    /// - Parameters:
    ///   - keys: what the decision reads.
    ///   - decide: the changes to write, and what the caller gets back.
    /// - Returns: the outcome of the decision whose changes were written.
    /// - Throws: what `decide` threw (nothing was written), or ``StoreError`` when the read or the
    ///   commit failed (nothing was written).
    func update<Outcome: Sendable>(
        reading keys: StateKeys, deciding decide: @escaping @Sendable (StateSnapshot) throws -> (changes: StateChanges, outcome: Outcome)
    ) async throws -> Outcome

    /// Updates nobody waits for (a push task's page), each as ``update(reading:deciding:)`` runs one, in
    /// order: a store that orders its writes itself runs them when no request's write is waiting, and
    /// one whose requests' writes can come between them (``interleavesBackgroundUpdates``) runs them in
    /// as few transactions as requests' writes arriving meanwhile allow, and lets those writes in between.
    /// - Parameter updates: the updates, in order; each reads what the ones before it wrote.
    /// - Returns: their outcomes, in order.
    /// - Throws: as ``update(reading:deciding:)``; the updates before the one that threw may have
    ///   been written (each is atomic, not all of them together).
    func backgroundUpdates<Outcome: Sendable>(_ updates: [StateUpdate<Outcome>]) async throws -> [Outcome]

    /// Whether ``backgroundUpdates(_:)`` lets a request's write in between its updates: a caller with
    /// long background work (a push task's page) then splits it into short updates, so that a request
    /// waits for one of them, not for all. `false`: each call is one turn whatever its size, and splitting
    /// would only add commits.
    var interleavesBackgroundUpdates: Bool { get }

    /// Reads `keys` in one consistent snapshot, awaited (a request's reads).
    /// - Parameter keys: what is read.
    func snapshot(_ keys: StateKeys) async throws -> StateSnapshot

    /// The groups `user` is a member of (every group with members or a profile, for `nil`), in
    /// code-point order, awaited.
    func groups(containing user: UserID?) async throws -> [String]

    /// A message's deliveries and where each stands, awaited.
    func deliveries(ofMessage id: String) async throws -> [DeliveryRecord]

    /// The store's delivery outbox, awaited.
    var outbox: any PushOutbox { get }
}

extension PushStateStore {
    /// Each update in its turn among the others, all of them: correct for any store.
    public func backgroundUpdates<Outcome: Sendable>(_ updates: [StateUpdate<Outcome>]) async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(updates.count)
        for update in updates { outcomes.append(try await self.update(reading: update.keys, deciding: update.decide)) }
        return outcomes
    }

    public var interleavesBackgroundUpdates: Bool { false }
}

/// An update as read → decide → commit: what it reads, and what it makes of what was read (a pure
/// function of the snapshot), for ``PushStateStore/update(reading:deciding:)`` and its kin.
public struct StateUpdate<Outcome: Sendable>: Sendable {
    /// What it reads.
    public var keys: StateKeys
    /// The changes to write, and what the caller gets back.
    public var decide: @Sendable (StateSnapshot) throws -> (changes: StateChanges, outcome: Outcome)

    /// - Parameters:
    ///   - keys: what it reads.
    ///   - decide: the changes to write, and what the caller gets back.
    public init(keys: StateKeys = StateKeys(), decide: @escaping @Sendable (StateSnapshot) throws -> (changes: StateChanges, outcome: Outcome)) {
        self.keys = keys
        self.decide = decide
    }
}

extension UserTable {
    /// The whole state: correct for any store; a store with cheaper reads does less.
    public func sender(_ id: UserID, group: String?) throws -> UserState? { try user(id)?.state }
}

extension SentMessageTable {
    /// One ``sentMessage(_:since:)`` each: correct for any store.
    public func sentMessages(_ ids: [(id: String, since: Instant)]) throws -> [[UInt8]?] {
        try ids.map { try sentMessage($0.id, since: $0.since) }
    }

    /// A store that hands out no rolls stores none.
    public func storeRoll(_ roll: ReceiverRoll, usedAt: Instant, encoded: () -> [UInt8]) throws -> Int64 {
        throw StoreError(.unexpectedValue, "this store keeps no receiver rolls", context: "receiver_rolls")
    }

    /// A store that hands out no rolls has none.
    public func roll(_ id: Int64) throws -> [UInt8]? { nil }

    /// One ``recordSentMessage(_:at:decisions:forgettingBefore:)`` each: correct for any store.
    public func recordSentMessages(_ messages: [SentMessage], forgettingBefore cutoff: Instant) throws {
        for message in messages { try recordSentMessage(message.id, at: message.sentAt, decisions: message.decisions, forgettingBefore: cutoff) }
    }
}

/// A sent message's record: its id, when it was sent and its encoded decisions (Specification §10).
public struct SentMessage: Hashable, Sendable {
    /// The message id.
    public var id: String
    /// When it was sent.
    public var sentAt: Instant
    /// The encoded decisions, kept byte for byte.
    public var decisions: [UInt8]

    public init(id: String, sentAt: Instant, decisions: [UInt8]) {
        self.id = id
        self.sentAt = sentAt
        self.decisions = decisions
    }
}

/// A store whose transactions are synchronous bodies (SQLite's, the memory twin's): its awaited
/// calls run them on a dispatch queue, never on the cooperative pool's threads.
package protocol TransactionStore: PushStateStore {
    /// Runs `body` in one write transaction; a thrown error rolls everything back and is rethrown.
    /// - Parameter body: reads and changes state through the transaction.
    func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T

    /// Runs `body` on one consistent snapshot; changes are not allowed (they throw).
    /// - Parameter body: reads state through the transaction.
    func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T
}

extension TransactionStore {
    /// The outbox as write and read transactions on the storage calls' queue.
    public var outbox: any PushOutbox { TransactionOutbox(store: self, turns: WriteTurns(.storageCalls)) }

    /// One read transaction on a storage read queue (never the cooperative pool's threads).
    public func snapshot(_ keys: StateKeys) async throws -> StateSnapshot {
        try await DispatchQueue.storageReads.transaction { try self.read { try $0.read(keys) } }
    }

    /// One read transaction on a storage read queue.
    public func groups(containing user: UserID?) async throws -> [String] {
        try await DispatchQueue.storageReads.transaction { try self.read { try $0.groups(containing: user) } }
    }

    /// One read transaction on a storage read queue.
    public func deliveries(ofMessage id: String) async throws -> [DeliveryRecord] {
        try await DispatchQueue.storageReads.transaction { try self.read { try $0.deliveries(ofMessage: id) } }
    }

    /// ``update(reading:deciding:)`` as one write transaction on the dispatch queue synchronous
    /// directories and files use: correct for any store; a store with a faster path takes it.
    public func update<Outcome: Sendable>(
        reading keys: StateKeys, deciding decide: @escaping @Sendable (StateSnapshot) throws -> (changes: StateChanges, outcome: Outcome)
    ) async throws -> Outcome {
        try await DispatchQueue.storageCalls.transaction { try self.write { try $0.update(reading: keys, deciding: decide) } }
    }
}

extension DispatchQueue {
    /// Where a synchronous directory's or file storage's awaited calls run: a serial queue of its own
    /// (it is given a thread even while the shared pool's threads are all busy or blocked).
    package static let storageCalls = DispatchQueue(label: "pushbridge-storage-calls")

    /// Where synchronous stores' awaited reads run: four serial queues of their own, taken in turn.
    /// Not Dispatch's global queue: its threads (as many as the cores) are shared with everything else
    /// in the process, and reads that wait there (on a lock, on SQLite's busy handler) would hold back
    /// every other read and every timer queued behind them.
    package static var storageReads: DispatchQueue {
        storageReadQueues[storageReadTurn.add(1, ordering: .relaxed).oldValue & 3]
    }
    private static let storageReadQueues = (0..<4).map { DispatchQueue(label: "pushbridge-storage-reads-\($0)") }
    private static let storageReadTurn = Atomic<Int>(0)

    /// Where the writers' and the commit combiner's short timers fire: a serial queue of its own, so a
    /// 2 ms pause is never queued behind blocked work on Dispatch's global queue.
    package static let storageTimers = DispatchQueue(label: "pushbridge-storage-timers")

    /// Runs a synchronous transaction on this queue and awaits its end; the caller holds no thread meanwhile.
    /// - Parameter body: the transaction, run once on the queue.
    package func transaction<T>(_ body: @escaping () throws -> T) async throws -> T {
        nonisolated(unsafe) let body = body  // run once, on this queue, before the continuation resumes
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<UnsafeResult<T>, any Error>) in
            self.async { continuation.resume(with: Result { UnsafeResult(value: try body()) }) }
        }.value
    }
}

extension PushStateTransaction {
    /// Reads `keys`, decides and commits in this transaction (``PushStateStore/update(reading:deciding:)``).
    /// - Parameters:
    ///   - keys: what the decision reads.
    ///   - decide: the changes and the outcome.
    package func update<Outcome>(reading keys: StateKeys, deciding decide: (StateSnapshot) throws -> (changes: StateChanges, outcome: Outcome)) throws -> Outcome {
        let (changes, outcome) = try decide(read(keys))
        if !changes.isEmpty { try commit(changes) }
        return outcome
    }
}

/// A value handed from a queue to the task awaiting it, once.
package struct UnsafeResult<T>: @unchecked Sendable {
    package var value: T
}

/// A user as stored: the canonical state, and whether any dialect call has configured it yet.
public struct UserRecord: Sendable {
    /// An unconfigured placeholder: what a user known only by id looks like.
    public static func placeholder(_ user: UserID) -> UserRecord {
        UserRecord(state: UserState(user: user, displayStyle: .simpleBanner, backgroundGraceSeconds: 0), isConfigured: false)
    }

    public var state: UserState
    /// `false` for a user known only as a group member: its display style and background grace are
    /// not set yet, and the dialect of the first call (or message) that reads it supplies them.
    public var isConfigured: Bool
    public init(state: UserState, isConfigured: Bool) {
        self.state = state
        self.isConfigured = isConfigured
    }
}

/// What one transaction can read and change: the focused tables below, together. A store's transaction
/// conforms to all of them; code that needs one part asks for that part (the delivery worker's
/// outbox, a group's members). Every method is synchronous inside its transaction: the asynchronous
/// boundary is the transaction's entry point (a service runs each app's writes on a serial queue of
/// its own, as GRDB runs a synchronous body behind an async call). A send costs a bounded number of
/// queries through them, never one per receiver.
package protocol PushStateTransaction: AppConfigurationTable, UserTable, GroupTable, LabelTable, TaskTable, SentMessageTable, OutboxTable {
    /// Writes what sends decided, together: badge counters, outbox rows, then records. A store that
    /// can write them in fewer round trips than one call to each table does (PostgreSQL: one statement).
    /// - Parameters:
    ///   - badges: counters, one entry per user row (`UserTable/setBadges(_:)`).
    ///   - deliveries: outbox rows (`OutboxTable/enqueueDeliveries(_:)`).
    ///   - records: sent-message records (`SentMessageTable/recordSentMessages(_:forgettingBefore:)`).
    ///   - cutoff: records sent before it may be forgotten.
    func writeSendEffects(badges: [(key: UserKey, badge: Int)], deliveries: [OutboxDelivery], records: [SentMessage], forgettingBefore cutoff: Instant) throws

    /// Reads what sends name before they are decided, one answer per key (``StateKeys``).
    func read(_ keys: StateKeys) throws -> StateSnapshot

    /// Writes what sends decided (``StateChanges``), together.
    func commit(_ changes: StateChanges) throws
}

extension PushStateTransaction {
    /// One call to each table: correct for any store.
    public func writeSendEffects(badges: [(key: UserKey, badge: Int)], deliveries: [OutboxDelivery], records: [SentMessage], forgettingBefore cutoff: Instant) throws {
        if !badges.isEmpty { try setBadges(badges) }
        if !deliveries.isEmpty { try enqueueDeliveries(deliveries) }
        if !records.isEmpty { try recordSentMessages(records, forgettingBefore: cutoff) }
    }
}

/// The app configuration: certificates and templates.
package protocol AppConfigurationTable {
    /// The app configuration (certificates and templates); empty until set.
    func app() throws -> AppConfiguration
    /// Replaces the app configuration.
    func setApp(_ app: AppConfiguration) throws
}

/// Users, their state and devices, as a decision reads them and as calls change them.
package protocol UserTable {
    /// A user's full state, or `nil` when the store has never heard of the user.
    func user(_ id: UserID) throws -> UserRecord?
    /// The sender of a message as a decision reads it: its display name and, for a group message,
    /// its name card in that group; nothing else of the state is loaded. `nil` for an unknown user.
    /// - Parameters:
    ///   - id: the sender.
    ///   - group: the group of a group message.
    func sender(_ id: UserID, group: String?) throws -> UserState?

    /// Stores a user's full state (inserting or replacing), which marks it configured. A device
    /// token that another user had moves to this user (one token, one owner).
    /// - Parameters:
    ///   - state: the new state.
    ///   - previous: the state as read in this transaction, if any: only what differs is rewritten.
    func save(_ state: UserState, replacing previous: UserState?) throws

    /// Everyone a message reaches except `sender`, in audience order (duplicates once), each loaded
    /// for deciding on `conversation`. One-to-one receivers the store does not know come back
    /// unconfigured, without a key. A bounded number of queries, never one per receiver.
    func receivers(of audience: Audience, excluding sender: UserID, conversation: ConversationKey) throws -> StoredReceivers

    /// Sets badge counters of receivers loaded in this transaction, in one statement.
    func setBadges(_ badges: [(key: UserKey, badge: Int)]) throws

    /// Forgets a user: its settings, devices, badge counter and group memberships. Other groups'
    /// member order is kept.
    /// - Parameter id: the user.
    /// - Returns: whether the store knew the user.
    func removeUser(_ id: UserID) throws -> Bool

    /// The user a device token is bound to, or `nil` when no one has it.
    /// - Parameter token: hex, lower case.
    func owner(ofDevice token: String) throws -> UserID?

    /// The devices a user bound through Easemob / Agora Chat REST, by device id and certificate
    /// name (Specification §14), in the order they were written. Removing the user forgets them.
    /// - Parameter user: the user.
    func pushBindings(of user: UserID) throws -> [PushBinding]
    /// Replaces a user's push bindings.
    /// - Parameters:
    ///   - bindings: each (device id, certificate name) once.
    ///   - user: the user.
    func setPushBindings(_ bindings: [PushBinding], of user: UserID) throws
}

/// Group membership, and what a group's vendor REST said of it.
package protocol GroupTable {
    /// A group's members in membership order (empty for an unknown group).
    func members(of group: String) throws -> [UserID]
    /// Replaces a group's members; users not yet known are created unconfigured.
    /// - Parameters:
    ///   - members: distinct, non-empty user ids, in the order to keep.
    ///   - group: the group id.
    func setMembers(_ members: [UserID], of group: String) throws
    /// A group's profile as the facade wrote it, or `nil` for a group that has none (one made by
    /// its membership alone).
    /// - Parameter group: the group id.
    func groupProfile(of group: String) throws -> [UInt8]?
    /// Replaces a group's profile; `nil` forgets the profile and the group's message sequence.
    /// - Parameters:
    ///   - profile: the encoded profile.
    ///   - group: the group id.
    func setGroupProfile(_ profile: [UInt8]?, of group: String) throws
    /// A group's message sequence (Tencent numbers each group's messages from 1; 0 before the first).
    /// - Parameters:
    ///   - group: the group id.
    ///   - advancing: move it on by one first (a new message; in a write transaction).
    func messageSequence(of group: String, advancing: Bool) throws -> Int64
    /// The ids of the groups that exist (with members or a profile), in id order; with `user`, only
    /// those it is a member of.
    /// - Parameter user: a member, or `nil` for every group.
    func groups(containing user: UserID?) throws -> [String]
}

/// The records of sent messages (Specification §10), and the rolls of kept receivers they refer to.
package protocol SentMessageTable {
    /// The decisions recorded for a message id by ``recordSentMessage(_:at:decisions:forgettingBefore:)``,
    /// byte for byte, or `nil` when the id was not sent since the cutoff (or was forgotten).
    /// - Parameters:
    ///   - id: the message id.
    ///   - cutoff: a record sent before this instant counts as forgotten, pruned or not.
    func sentMessage(_ id: String, since cutoff: Instant) throws -> [UInt8]?

    /// What ``sentMessage(_:since:)`` answers for each of several ids (a batch's), in fewer queries.
    /// - Parameter ids: message ids, each with its cutoff.
    /// - Returns: one answer per id, in order.
    func sentMessages(_ ids: [(id: String, since: Instant)]) throws -> [[UInt8]?]

    /// Records a sent message's decisions, and forgets messages sent before a cutoff.
    /// - Parameters:
    ///   - id: the message id.
    ///   - instant: when it was sent.
    ///   - decisions: the encoded decisions, returned as they are by ``sentMessage(_:since:)``.
    ///   - cutoff: messages sent before this instant are forgotten.
    func recordSentMessage(_ id: String, at instant: Instant, decisions: [UInt8], forgettingBefore cutoff: Instant) throws

    /// Stores a kept roll's receivers for the records that refer to it, once while the roll is kept.
    ///
    /// The stored roll lives as long as the last record that uses it: using it moves its time to
    /// `usedAt`, and ``recordSentMessages(_:forgettingBefore:)`` forgets rolls with the records.
    /// Only a store whose `UserTable/receivers(of:excluding:conversation:)` hands out rolls keeps them; the
    /// others throw.
    /// - Parameters:
    ///   - roll: a roll from ``StoredReceivers/roll`` in this transaction.
    ///   - usedAt: when the send that refers to it was sent.
    ///   - encoded: the roll's bytes, asked for only when it is not stored yet.
    /// - Returns: the stored roll's id, for ``roll(_:)``.
    func storeRoll(_ roll: ReceiverRoll, usedAt: Instant, encoded: () -> [UInt8]) throws -> Int64

    /// A stored roll's bytes as given to ``storeRoll(_:usedAt:encoded:)``, or `nil` when no roll has this id.
    func roll(_ id: Int64) throws -> [UInt8]?

    /// Records several sent messages' decisions at once (a group commit's sends), and forgets
    /// messages sent before a cutoff: what ``recordSentMessage(_:at:decisions:forgettingBefore:)``
    /// does for each, in order, in fewer statements.
    /// - Parameters:
    ///   - messages: the records; a later one with the same id replaces an earlier one.
    ///   - cutoff: messages sent before this instant are forgotten.
    func recordSentMessages(_ messages: [SentMessage], forgettingBefore cutoff: Instant) throws
}

/// The delivery outbox (Specification §13).
package protocol OutboxTable {
    /// Queues deliveries; the store assigns their ids.
    /// - Parameter deliveries: the deliveries, `id` and `attempts` ignored.
    func enqueueDeliveries(_ deliveries: [OutboxDelivery]) throws

    /// Claims queued deliveries that are due and not claimed by another worker: they stay claimed
    /// until `claimUntil` (a worker that dies gives them up then), earliest due first.
    /// - Parameters:
    ///   - now: the current instant.
    ///   - claimUntil: when the claim lapses.
    ///   - limit: the most to claim.
    ///   - taskLimit: the most of them from push tasks' lane (``OutboxDelivery/lane`` 1): chat pushes,
    ///     claimed first, may take all of `limit`.
    func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) throws -> [OutboxDelivery]

    /// Records attempts: each settlement counts one attempt, and ends the claim.
    /// - Parameters:
    ///   - settlements: one per attempted delivery.
    ///   - now: when they were recorded.
    func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) throws

    /// Ends every claim (a store only one process uses, after a restart: nobody else holds them).
    func releaseDeliveryClaims() throws

    /// When the next queued delivery can be claimed (a claimed one: when its claim lapses), or `nil`.
    func nextDeliveryDue() throws -> Instant?

    /// A message's deliveries, in the order they were queued.
    /// - Parameter id: the message id.
    func deliveries(ofMessage id: String) throws -> [DeliveryRecord]

    /// Forgets delivered and failed deliveries settled before a cutoff.
    /// - Returns: how many were forgotten.
    func pruneDeliveries(settledBefore cutoff: Instant) throws -> Int

    /// How many deliveries the outbox holds in each state (every row: a report's, not a worker's look).
    func outboxCounts() throws -> OutboxCounts

    /// How many deliveries are queued (read from the queued rows alone, however many were made before).
    func queuedDeliveryCount() throws -> Int

    /// The outbox rows of the messages whose id starts with `prefix`, counted by state.
    func outboxCounts(ofMessagesStartingWith prefix: String) throws -> OutboxCounts
}
