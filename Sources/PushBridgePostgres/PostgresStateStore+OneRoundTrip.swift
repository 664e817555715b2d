import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeStore
import Synchronization

// A group of sends decided against what the node keeps, then committed in one round trip that
// holds no thread (issue 49): the function `pushbridge_commit_logged` takes the write lock, checks
// that nothing read has changed since (another node's counters only when they are of users read),
// and writes the sends' effects. When anything was not kept, or the check finds a change (another
// node wrote), the group is decided again under the write lock, from kept data still: what it reads
// that is not kept is read (awaited) and kept, and the same function writes its effects. A group
// that reads what kept data cannot answer (a write other than a send's) runs as
// ``PostgresStateStore/writeGroup(_:readingRecordsOf:)`` runs it, replayed — same decisions, same bytes.

extension PostgresStateStore {
    public func writeGroup(
        _ writers: [(any PushStateStore) -> Void], readingRecordsOf ids: [String], repeatable: Bool, joinedBy joiners: WriteGroupJoiners?, on executor: DispatchQueue
    ) async throws {
        let group = GroupMembers(writers: writers, ids: ids)
        // Decided again from kept data while the check finds only another node's counters (at most
        // ``maximumDecisions`` times): the answer brought them, so the next decision counts on from
        // them. Each decision is made when its statement goes, with the sends that joined meanwhile.
        if repeatable, oneRoundTrip.shouldTry() {
            var decisions = 1
            while true {
                guard let (commit, answer) = try await pool.commits.commit(schema: schema, on: pool, decide: { [self] in
                    if let joiners { group.join(joiners.take()) }
                    return decideFromKeptData(group.writers)
                }) else { break }
                let outcome = outcome(of: commit, answer, last: decisions == Self.maximumDecisions)
                if outcome == .committed { return }
                guard outcome == .countedElsewhere else { break }
                decisions += 1
            }
        }
        try await writingGroup(group.writers, readingRecordsOf: group.ids)
    }

    /// The writers run against kept data under the lock, as often as they miss something a load can
    /// bring (each load awaited and kept); their commit, or `nil` when they need what no load brings.
    func decideUnderLock(_ writers: [(any PushStateStore) -> Void], lock: WriteLock, session: PostgresSession) async throws -> KeptDataCommit? {
        let start = startingPoint()
        let app: AppConfiguration
        if let kept = start.app, kept.version == lock.appVersion {
            app = kept.app
        } else {
            app = try await load(session, lock: lock, start: start) { try $0.app() }
        }
        let records = LockedRecords(lock.records ?? [:])
        // Each round of loads brings what the last run missed; a run that misses again after
        // `maximumLoadRounds` (something a load cannot keep: a group past the node's budget) goes
        // to the replayed path.
        for _ in 0...Self.maximumLoadRounds {
            let run = KeptDataRun(store: self, app: app, records: records)
            let store = KeptDataStore(run)
            for writer in writers { writer(store) }
            guard run.missed else {
                // `nil` past the badge log's limit (a fold): the replayed path.
                return kept.badges.flatMap { commit(of: run, configuration: lock.appVersion, data: lock.dataVersion, badges: $0) }
            }
            guard !run.loads.isEmpty, run.loads.count == run.misses else { return nil }
            for load in run.loads { _ = try await self.load(session, lock: lock, start: start, load) }
        }
        return nil
    }

    /// Decisions from kept data a group makes at most while each commit finds only another node's
    /// counters, before it goes to the lock: one app written on two nodes to one receiver finds them
    /// at nearly every commit, and a decision again (one round trip, no lock held between) costs less
    /// than the lock's three (`PUSHBRIDGE_BENCH_ONLY=one-app`: two decisions 0.37–0.42× one node,
    /// four 0.47×, eight 0.56–0.60× with the sends that joined meanwhile in each, sixteen 0.60×).
    static let maximumDecisions = 8

    /// Rounds of loads a group decided under the lock may take (a sender, its receivers, a roll…).
    static let maximumLoadRounds = 4

    /// Runs one load (a transaction method that reads what a send needs and keeps it) on the lock's
    /// transaction, replayed: its statements are awaited; what it keeps, it keeps as its last step.
    private func load<T>(_ session: PostgresSession, lock: WriteLock, start: TransactionContext.StartingPoint, _ body: (Transaction) throws -> T) async throws -> T {
        let (result, last) = try await Self.replaying(session, context: { TransactionContext(store: self, lock: lock, start: start, keepsData: true) }) {
            try body(Transaction($0, writable: true, context: $1))
        }
        last?.keepStoreChanges()
        return result
    }

    /// Runs the writers against what the node keeps, when it keeps what a send reads and no write of
    /// this store runs on the node now: their effects and what they read, or `nil` (the locked path).
    private func decideFromKeptData(_ writers: [(any PushStateStore) -> Void]) -> KeptDataCommit? {
        guard gate.tryEnter() else { return nil }
        defer { gate.leave() }
        guard let version = kept.dataVersion, let badges = kept.badges, !badges.isStale, let app = keptApp.current else { return nil }
        let run = KeptDataRun(store: self, app: app.app, records: nil)
        let store = KeptDataStore(run)
        for writer in writers { writer(store) }
        guard !run.missed else {
            oneRoundTrip.missed()
            return nil
        }
        // A log past its limit is folded under the lock.
        return commit(of: run, configuration: app.version, data: version, badges: badges)
    }

    /// What a run that missed nothing commits at the versions it was decided at: its effects (one
    /// counter a user row, one record an id) and what it read; `nil` when the badge log would pass
    /// its limit (folded under the lock, on the replayed path).
    private func commit(of run: KeptDataRun, configuration: Int64, data: Int64, badges: BadgeOverlay) -> KeptDataCommit? {
        var effects = run.effects
        effects.dedupe(users: run.counted.count)
        if logIsFull(badges, adding: effects.badges.count) { return nil }
        let prunes = !effects.records.isEmpty && Self.pruningIsDue(before: effects.cutoff, prunedBefore: sentMessagesPrunedBefore)
        return KeptDataCommit(
            configuration: configuration, data: data, lastLog: badges.lastID, readUsers: run.readUsers, reads: run.reads, rolls: run.rolls, effects: effects,
            pruneBefore: prunes ? effects.cutoff : nil)
    }

    /// How a commit sent in one round trip ended.
    enum OneRoundTripOutcome {
        /// Written; what the node keeps took its effects.
        case committed
        /// Nothing written: another node counted a user whose state the decisions read; the node
        /// keeps those counters now, so the next decision counts on from them.
        case countedElsewhere
        /// Nothing written: something else changed (the group goes to the lock).
        case changed
    }

    /// What the node keeps takes `commit`'s answer (its effects when it committed, and the badge log
    /// rows other nodes appended either way); how the commit ended.
    /// - Parameter last: whether no decision follows (a change then counts toward the back-off).
    private func outcome(of commit: KeptDataCommit, _ answer: PostgresCommitCombiner.Answer, last: Bool) -> OneRoundTripOutcome {
        let readOn = keep(commit, answer)
        guard answer.committed else {
            if readOn && !answer.appended.isEmpty && !last {
                oneRoundTrip.recounted()
                return .countedElsewhere
            }
            oneRoundTrip.changed()
            return .changed
        }
        oneRoundTrip.committed()
        return .committed
    }

    /// What the node keeps takes the badge log rows other nodes appended since the decision, and a
    /// committed group's effects: its counters, its log row, its pruning time. Another write of this
    /// node since the decision leaves it to the next lock's check (the log's end tells).
    /// - Returns: whether what the node keeps is at the log's end now (another decision may follow).
    private func keep(_ commit: KeptDataCommit, _ answer: PostgresCommitCombiner.Answer) -> Bool {
        guard gate.tryEnter() else { return false }
        defer { gate.leave() }
        guard kept.dataVersion == commit.data, answer.dataVersion == commit.data, kept.badges?.lastID == commit.lastLog else { return false }
        do {
            try apply(commit, answer)
            return true
        } catch {
            kept.forget()  // a log row this node cannot read: read everything again under the lock
            return false
        }
    }

    /// What the node keeps takes a commit's answer: the rows other nodes appended, the commit's
    /// counters and log row, its pruning time. Under ``gate``.
    /// - Throws: ``StoreError`` for a log row this node cannot read.
    func apply(_ commit: KeptDataCommit, _ answer: PostgresCommitCombiner.Answer) throws {
        for row in answer.appended where row.id < answer.logRow ?? .max { try kept.readOn(row) }
        if answer.committed {
            let badges = commit.effects.badges
            if let logRow = answer.logRow { kept.badges?.add(badges, id: logRow) }
            if !badges.isEmpty { kept.counted(badges) }
            if let cutoff = commit.pruneBefore { sentMessagesPrunedBefore = cutoff.milliseconds }
        }
        for row in answer.appended where row.id > answer.logRow ?? .max { try kept.readOn(row) }
        kept.committed(at: commit.data)
    }

    /// How often a group of sends is decided from what the node keeps: always while those commits
    /// succeed; after one finds a change (two nodes writing one app), the next few groups go to the
    /// lock first, twice as many after each change in a row (at most 64).
    final class OneRoundTripPolicy: Sendable {
        private struct State {
            var skip = 0
            var backoff = 1
        }
        private let state = Mutex(State())
        /// Groups committed in one round trip; groups whose check found a change; commits whose check
        /// found only another node's counters (decided again); groups that read something not kept.
        let committedCount = StatementCounter(), changedCount = StatementCounter(), recountedCount = StatementCounter(), missedCount = StatementCounter()
        /// Groups decided from kept data under the write lock.
        let lockedCount = StatementCounter()

        func shouldTry() -> Bool {
            state.withLock { state in
                guard state.skip > 0 else { return true }
                state.skip -= 1
                return false
            }
        }

        func committed() {
            committedCount.add()
            state.withLock { $0.backoff = 1 }
        }

        func changed() {
            changedCount.add()
            state.withLock { state in
                state.skip = state.backoff
                state.backoff = min(state.backoff * 2, 64)
            }
        }

        func missed() { missedCount.add() }

        func recounted() { recountedCount.add() }
    }
}

/// What a group of sends decided from kept data: what it read (to check) and what it writes.
struct KeptDataCommit {
    /// `app_version.version` and `data_version` the decisions were made at, and the badge log's last row (`0`: empty).
    var configuration: Int64
    var data: Int64
    var lastLog: Int64
    /// The user rows whose state the decisions read (`nil`: too many to list — any counter moved
    /// since is a change).
    var readUsers: Set<Int64>?
    /// The message ids looked up, each with the earliest instant a record of it counts from.
    var reads: [String: Instant]
    /// The stored rolls referred to, with the latest instant each was used at.
    var rolls: [Int64: Instant]
    var effects: KeptDataEffects
    /// Records (and rolls) sent before this are forgotten, when due.
    var pruneBefore: Instant?

    /// The call of the schema's `pushbridge_commit_logged` with every array, its parameters appended to `binds`.
    func call(scope: String, binds: inout PostgresBindings) throws -> String {
        let first = binds.count + 1
        let (badges, deliveries, records) = (effects.badges, effects.deliveries, effects.records)
        let reads = self.reads.sorted { $0.key < $1.key }
        let rolls = self.rolls.sorted { $0.key < $1.key }
        binds.append(scope)
        binds.append(configuration)
        binds.append(data)
        binds.append(lastLog)
        binds.append(readUsers.map { $0.sorted() })
        binds.append(reads.map(\.key))
        binds.append(reads.map(\.value.milliseconds))
        binds.append(rolls.map(\.key))
        binds.append(rolls.map(\.value.milliseconds))
        binds.append(badges.isEmpty ? nil : ByteBuffer(bytes: BadgeLogEntries.write(badges)))
        binds.append(BadgeLogEntries.users(of: badges))
        binds.append(deliveries.map(\.messageID))
        binds.append(deliveries.map(\.receiver))
        binds.append(deliveries.map(\.token))
        binds.append(deliveries.map(\.environment.rawValue))
        binds.append(deliveries.map(\.boundAt.milliseconds))
        binds.append(deliveries.map { ByteBuffer(bytes: OutboxDelivery.encode($0.headers)) })
        binds.append(deliveries.map { ByteBuffer(bytes: $0.payload) })
        binds.append(deliveries.map(\.queuedAt.milliseconds))
        binds.append(records.map(\.id))
        binds.append(records.map(\.sentAt.milliseconds))
        binds.append(records.map { ByteBuffer(bytes: $0.decisions) })
        binds.append(pruneBefore?.milliseconds)
        let placeholders = (first...binds.count).map { "$\($0)" }.joined(separator: ", ")
        // The schema is a checked identifier (PostgresLocation.checkSchema): the call needs no search path.
        return "\(scope).pushbridge_commit_logged(\(placeholders))"
    }
}

/// A group's writers and the ids of the messages they send: those it began with, and those that
/// joined it before any of its decisions (set by the task that sends that decision's statement, read
/// by the group's own once the statement has answered).
final class GroupMembers: @unchecked Sendable {
    private let lock = Mutex(())
    private var members: (writers: [(any PushStateStore) -> Void], ids: [String])

    init(writers: [(any PushStateStore) -> Void], ids: [String]) {
        members = (writers, ids)
    }

    var writers: [(any PushStateStore) -> Void] { lock.withLock { _ in members.writers } }
    var ids: [String] { lock.withLock { _ in members.ids } }

    /// Appends the writers and ids that joined.
    func join(_ joined: (writers: [(any PushStateStore) -> Void], ids: [String])) {
        guard !joined.writers.isEmpty else { return }
        lock.withLock { _ in
            members.writers += joined.writers
            members.ids += joined.ids
        }
    }
}

/// The sent-message records a group decided under the write lock reads: those the lock read, and those
/// loaded since (`nil`: no record of that id).
final class LockedRecords {
    var byID: [String: PostgresStateStore.StoredSentMessage?]
    init(_ byID: [String: PostgresStateStore.StoredSentMessage?]) { self.byID = byID }
}

/// The effects of a group's sends as the writers gave them, merged.
struct KeptDataEffects {
    var badges: [(key: UserKey, badge: Int)] = []
    var deliveries: [OutboxDelivery] = []
    var records: [SentMessage] = []
    var cutoff = Instant(milliseconds: .min)

    mutating func add(badges: [(key: UserKey, badge: Int)], deliveries: [OutboxDelivery], records: [SentMessage], cutoff: Instant) {
        self.badges += badges
        self.deliveries += deliveries
        self.records += records
        if !records.isEmpty { self.cutoff = max(self.cutoff, cutoff) }
    }

    /// One counter a user row and one record an id, the latest of each (one statement changes a row once).
    /// - Parameter users: how many user rows the counters are of (``KeptDataRun/counted``'s count):
    ///   when each counter is of a row of its own (a group send's are), they stay as they are.
    mutating func dedupe(users: Int) {
        records = records.latestOfEachID()
        guard users < badges.count else { return }
        var position: [UserKey: Int] = [:]
        position.reserveCapacity(users)
        var merged: [(key: UserKey, badge: Int)] = []
        merged.reserveCapacity(users)
        for entry in badges {
            if let at = position[entry.key] { merged[at].badge = entry.badge } else {
                position[entry.key] = merged.count
                merged.append(entry)
            }
        }
        badges = merged
    }

    /// The record a write of this group left for an id, sent since `cutoff`.
    func record(_ id: String, since cutoff: Instant) -> [UInt8]? {
        records.last { $0.id == id && $0.sentAt >= cutoff }?.decisions
    }
}

/// One run of a group's writers against what the node keeps: what they read and what they write.
/// A read of anything not kept (or a write other than a send's) is a *miss*: it is noted here, so
/// that no `try?` of a caller hides it, and the run's result is thrown away.
final class KeptDataRun {
    unowned let store: PostgresStateStore
    let app: AppConfiguration
    var effects = KeptDataEffects()
    var reads: [String: Instant] = [:]
    var rolls: [Int64: Instant] = [:]
    /// The user rows whose state was read (``KeptDataCommit/readUsers``).
    var readUsers: Set<Int64>? = []
    /// The counters this run's writers set so far, by user row: a later writer reads them.
    var counted: [Int64: Int] = [:]
    private(set) var missed = false
    /// Under the write lock: the records of the group's message ids, as the lock (or a load) read
    /// them; `nil`: not under the lock (each is assumed unsent, and checked).
    let records: LockedRecords?
    /// Under the write lock: misses, and the loads that bring what they missed (a load per miss when
    /// every miss has one). Writers after a miss still run, so that one round of loads brings
    /// what all of them need.
    private(set) var misses = 0
    private(set) var loads: [(PostgresStateStore.Transaction) throws -> Void] = []

    /// Notes the receivers read; past ``BadgeLogEntries/listedUsers`` rows in all, they are not listed.
    func read(_ receivers: StoredReceivers) {
        guard let listed = readUsers else { return }
        guard listed.count + receivers.count <= BadgeLogEntries.listedUsers else { return readUsers = nil }
        for receiver in receivers { if let key = receiver.key?.rawValue { readUsers?.insert(key) } }
    }

    init(store: PostgresStateStore, app: AppConfiguration, records: LockedRecords?) {
        self.store = store
        self.app = app
        self.records = records
    }

    /// Whether the run is under the write lock (its misses are loaded, and it runs again).
    var isLocked: Bool { records != nil }

    /// Notes a miss and returns the error that ends the writer's call.
    /// - Parameters:
    ///   - what: what was not kept, for the error.
    ///   - load: under the lock, the transaction call that reads it and keeps it.
    func miss(_ what: String, load: ((PostgresStateStore.Transaction) throws -> Void)? = nil) -> StoreError {
        missed = true
        misses += 1
        if let load { loads.append(load) }
        return StoreError(.busy, "not kept on this node: \(what)", context: "kept data")
    }
}

/// The store a writer sees in a run against kept data: its writes are kept in the run; one that
/// throws leaves nothing there.
final class KeptDataStore: PushStateStore, @unchecked Sendable {
    let run: KeptDataRun

    init(_ run: KeptDataRun) { self.run = run }

    func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        try atomically { _ in try body(KeptDataTransaction(run, writable: true)) }
    }

    func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        if run.missed && !run.isLocked { throw run.miss("a read after a miss") }
        return try body(KeptDataTransaction(run, writable: false))
    }

    func atomically<T>(_ body: (any PushStateStore) throws -> T) throws -> T {
        if run.missed && !run.isLocked { throw run.miss("a write after a miss") }
        let (effects, reads, rolls, readUsers, counted) = (run.effects, run.reads, run.rolls, run.readUsers, run.counted)
        do {
            return try body(self)
        } catch {
            (run.effects, run.reads, run.rolls, run.readUsers, run.counted) = (effects, reads, rolls, readUsers, counted)
            throw error
        }
    }
}

/// A transaction that answers from what the node keeps, or misses.
final class KeptDataTransaction: SendEffectsInOneCall {
    let run: KeptDataRun
    let writable: Bool

    init(_ run: KeptDataRun, writable: Bool) {
        self.run = run
        self.writable = writable
    }

    private var kept: PostgresStateStore.KeptData { run.store.kept }

    private func checkWritable() throws {
        guard writable else { throw StoreError.changeInReadTransaction }
    }

    // MARK: What a send reads

    func app() throws -> AppConfiguration { run.app }

    func sender(_ id: UserID, group: String?) throws -> UserState? {
        guard let sender = kept.users.senders[.init(name: id, group: group)] else { throw run.miss("sender") { _ = try $0.sender(id, group: group) } }
        return sender
    }

    func receivers(of audience: Audience, excluding sender: UserID, conversation: ConversationKey) throws -> StoredReceivers {
        switch audience {
        case .group(let group):
            guard let table = kept.receivers.tables[.init(group: group, conversation: conversation)] else {
                throw run.miss("a group's receivers") { _ = try $0.receivers(of: audience, excluding: sender, conversation: conversation) }
            }
            let receivers = table.receivers(excluding: sender).recounted(run.counted)
            run.read(receivers)
            return receivers
        case .users(let users):
            let wanted = PostgresStateStore.KeptOneToOne.wanted(users, excluding: sender)
            guard let known = kept.users.receivers(wanted, in: conversation) else {
                throw run.miss("a receiver") { _ = try $0.receivers(of: audience, excluding: sender, conversation: conversation) }
            }
            let receivers = StoredReceivers(known).recounted(run.counted)
            run.read(receivers)
            return receivers
        }
    }

    func groupProfile(of group: String) throws -> [UInt8]? {
        guard let profile = kept.profiles[group] else { throw run.miss("a group's profile") { _ = try $0.groupProfile(of: group) } }
        return profile
    }

    /// Under the lock, as the lock read it; else assumed unsent: the commit checks it (and finds a
    /// change when it was sent).
    func sentMessage(_ id: String, since cutoff: Instant) throws -> [UInt8]? {
        if let record = run.effects.record(id, since: cutoff) { return record }
        if let records = run.records {
            guard let known = records.byID[id] else {
                throw run.miss("a record the lock did not read") { records.byID[id] = .some(try $0.storedRecords([id])[id]) }
            }
            return known.flatMap { $0.sentAt >= cutoff.milliseconds ? $0.decisions : nil }
        }
        run.reads[id] = min(run.reads[id] ?? cutoff, cutoff)
        return nil
    }

    /// Under the lock, one load for every id it did not read; else one ``sentMessage(_:since:)`` each.
    func sentMessages(_ ids: [(id: String, since: Instant)]) throws -> [[UInt8]?] {
        if let records = run.records {
            let missing = ids.map(\.id).filter { records.byID[$0] == nil }
            if !missing.isEmpty {
                throw run.miss("records the lock did not read") { transaction in
                    let found = try transaction.storedRecords(missing)
                    for id in missing { records.byID[id] = .some(found[id]) }
                }
            }
        }
        return try ids.map { try sentMessage($0.id, since: $0.since) }
    }

    // MARK: What a send writes

    func storeRoll(_ roll: ReceiverRoll, usedAt: Instant, encoded: () -> [UInt8]) throws -> Int64 {
        try checkWritable()
        guard let id = kept.receivers.tables.values.first(where: { $0.roll === roll })?.rollID else {
            let bytes = encoded()
            throw run.miss("a roll not stored yet") { _ = try $0.storeRoll(roll, usedAt: usedAt, encoded: { bytes }) }
        }
        run.rolls[id] = max(run.rolls[id] ?? usedAt, usedAt)
        return id
    }

    func writeSendEffects(badges: [(key: UserKey, badge: Int)], deliveries: [OutboxDelivery], records: [SentMessage], forgettingBefore cutoff: Instant) throws {
        try checkWritable()
        run.effects.add(badges: badges, deliveries: deliveries, records: records, cutoff: cutoff)
        if run.counted.isEmpty { run.counted.reserveCapacity(badges.count) }  // a group send's: one growth, not twenty
        for (key, badge) in badges { run.counted[key.rawValue] = badge }
    }

    func recordSentMessages(_ messages: [SentMessage], forgettingBefore cutoff: Instant) throws {
        try writeSendEffects(badges: [], deliveries: [], records: messages, forgettingBefore: cutoff)
    }

    // MARK: Everything else is read or written under the lock

    func roll(_ id: Int64) throws -> [UInt8]? { throw run.miss("a stored roll") }
    func setApp(_ app: AppConfiguration) throws { throw run.miss("a configuration change") }
    func user(_ id: UserID) throws -> UserRecord? { throw run.miss("a user") }
    func save(_ state: UserState, replacing previous: UserState?) throws { throw run.miss("a user change") }
    func removeUser(_ id: UserID) throws -> Bool { throw run.miss("a user change") }
    func owner(ofDevice token: String) throws -> UserID? { throw run.miss("a device") }
    func pushBindings(of user: UserID) throws -> [PushBinding] { throw run.miss("push bindings") }
    func setPushBindings(_ bindings: [PushBinding], of user: UserID) throws { throw run.miss("a push binding change") }
    func members(of group: String) throws -> [UserID] { throw run.miss("members") }
    func setMembers(_ members: [UserID], of group: String) throws { throw run.miss("a membership change") }
    func setGroupProfile(_ profile: [UInt8]?, of group: String) throws { throw run.miss("a profile change") }
    func messageSequence(of group: String, advancing: Bool) throws -> Int64 { throw run.miss("a message sequence") }
    func groups(containing user: UserID?) throws -> [String] { throw run.miss("groups") }
    func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int) throws -> [OutboxDelivery] { throw run.miss("the outbox") }
    func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) throws { throw run.miss("the outbox") }
    func releaseDeliveryClaims() throws { throw run.miss("the outbox") }
    func nextDeliveryDue() throws -> Instant? { throw run.miss("the outbox") }
    func deliveries(ofMessage id: String) throws -> [DeliveryRecord] { throw run.miss("the outbox") }
    func pruneDeliveries(settledBefore cutoff: Instant) throws -> Int { throw run.miss("the outbox") }
    func outboxCounts() throws -> OutboxCounts { throw run.miss("the outbox") }
}
