import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeStore
import Synchronization

// An update decided on what the node keeps, then committed in one round trip: the function
// `pushbridge_commit_logged` (`pushbridge_commit_apps` beside other apps' commits) takes the write lock, checks that nothing read has changed since
// (another node's counters only when they are of users read), and writes the sends' effects. When
// anything read is not kept, the changes are more than a send's effects, or the check finds a
// change, the update reads and decides again under the write lock (``PostgresStateStore/update(reading:deciding:)``).

extension PostgresStateStore {
    /// What an update read from what the node keeps: the snapshot, and what the commit checks.
    struct KeptRead {
        var snapshot: StateSnapshot
        /// `app_version.version` and `data_version` it was read at, and the badge log's last row (`0`: empty).
        var configuration: Int64
        var data: Int64
        var lastLog: Int64
        /// The user rows whose state was read (`nil`: too many to list).
        var readUsers: Set<Int64>?
        /// The message ids looked up (each assumed unsent), with the earliest instant a record counts from.
        var reads: [String: Instant]
    }

    /// `keys` answered from what the node keeps, when it keeps them all: senders, profiles, receivers,
    /// targets and the app's configuration (records are assumed unsent, and checked by the commit);
    /// `nil` when anything is not kept, or the keys ask for what is never kept (users' records,
    /// member lists, bindings, devices, sequences, labels, tasks, delivery counts). Under ``gate``.
    func keptRead(_ keys: StateKeys) -> KeptRead? {
        guard keys.users.isEmpty, keys.memberLists.isEmpty, keys.bindings.isEmpty, keys.deviceOwners.isEmpty, keys.sequences.isEmpty, keys.labels.isEmpty,
            keys.labelPages.isEmpty, keys.tasks.isEmpty, keys.deliveryCounts.isEmpty
        else { return nil }
        guard let version = kept.dataVersion, let badges = kept.badges, !badges.isStale, let app = keptApp.current else { return nil }
        var senders: [UserState?] = []
        senders.reserveCapacity(keys.senders.count)
        for sender in keys.senders {
            guard let known = kept.users.senders[.init(name: sender.user, group: sender.group)] else { return nil }
            senders.append(known)
        }
        var profiles: [[UInt8]?] = []
        for group in keys.groupProfiles {
            guard let profile = kept.profiles[group] else { return nil }
            profiles.append(profile)
        }
        var readUsers: Set<Int64>? = []
        var receivers: [StoredReceivers] = []
        receivers.reserveCapacity(keys.receivers.count)
        for key in keys.receivers {
            let found: StoredReceivers
            switch key.audience {
            case .group(let group):
                guard let table = kept.receivers.tables[.init(group: group, conversation: key.conversation)] else { return nil }
                found = table.receivers(excluding: key.sender)
            case .users(let users):
                guard let known = kept.users.receivers(KeptOneToOne.wanted(users, excluding: key.sender), in: key.conversation) else { return nil }
                found = StoredReceivers(known)
            }
            if let listed = readUsers {
                if listed.count + found.count > BadgeLogEntries.listedUsers {
                    readUsers = nil
                } else {
                    for receiver in found { if let row = receiver.key?.rawValue { readUsers?.insert(row) } }
                }
            }
            receivers.append(found)
        }
        var knownTargets: [Bool] = []
        for target in keys.targets {
            switch target {
            case .user(let user):
                guard let known = kept.users.senders[.init(name: user, group: nil)] else { return nil }
                knownTargets.append(known != nil)
            case .group(let group):
                if case .some(.some) = kept.profiles[group] {
                    knownTargets.append(true)
                } else if kept.receivers.tables.contains(where: { $0.key.group == group && !$0.value.rows.isEmpty }) {
                    knownTargets.append(true)
                } else {
                    return nil
                }
            }
        }
        var reads: [String: Instant] = [:]
        for record in keys.records { reads[record.id] = min(reads[record.id] ?? record.since, record.since) }
        return KeptRead(
            snapshot: StateSnapshot(
                app: keys.app ? app.app : nil, senders: senders, groupProfiles: profiles, receivers: receivers,
                records: Array(repeating: nil, count: keys.records.count), knownTargets: knownTargets),
            configuration: app.version, data: version, lastLog: badges.lastID, readUsers: readUsers, reads: reads)
    }

    /// What `changes`, decided on `read`, commit in one round trip; `nil` when they are more than a
    /// send's effects, refer to a roll not stored yet, or would pass the badge log's limit (the
    /// locked path folds it). Under ``gate``.
    func keptCommit(of changes: StateChanges, read: KeptRead) -> KeptDataCommit? {
        guard changes.app == nil, changes.removedUsers.isEmpty, changes.users.isEmpty, changes.bindings.isEmpty, changes.groups.isEmpty, changes.labels.isEmpty, changes.tasks.isEmpty,
            let badges = kept.badges
        else { return nil }
        var rolls: [Int64: Instant] = [:]
        var records: [SentMessage] = []
        records.reserveCapacity(changes.records.count)
        for record in changes.records {
            var rollID: Int64 = 0
            if let roll = record.pendingRoll {
                // A roll not stored yet is stored under the lock.
                guard let id = kept.receivers.tables.values.first(where: { $0.roll === roll })?.rollID else { return nil }
                rolls[id] = max(rolls[id] ?? record.sentAt, record.sentAt)
                rollID = id
            }
            records.append(record.sentMessage(storedRoll: rollID))
        }
        var effects = KeptDataEffects(badges: changes.badges, deliveries: changes.deliveries, records: records.latestOfEachID())
        if !records.isEmpty { effects.cutoff = changes.cutoff }
        if logIsFull(badges, adding: effects.badges.count) { return nil }
        let prunes = !records.isEmpty && Self.pruningIsDue(before: effects.cutoff, prunedBefore: sentMessagesPrunedBefore)
        return KeptDataCommit(
            configuration: read.configuration, data: read.data, lastLog: read.lastLog, readUsers: read.readUsers, reads: read.reads, rolls: rolls,
            effects: effects, pruneBefore: prunes ? effects.cutoff : nil)
    }

    /// Decisions on kept data an update makes at most while each commit finds only another node's
    /// counters, before it goes to the lock: one app written on two nodes to one receiver finds them
    /// at nearly every commit, and a decision again (one round trip, no lock held between) costs less
    /// than the lock's three.
    static let maximumDecisions = 8

    /// How a commit sent in one round trip ended.
    enum OneRoundTripOutcome {
        /// Written; what the node keeps took its effects.
        case committed
        /// Nothing written: another node counted a user whose state the decisions read; the node
        /// keeps those counters now, so the next decision counts on from them.
        case countedElsewhere
        /// Nothing written: something else changed (the update goes to the lock).
        case changed
    }

    /// What the node keeps takes `commit`'s answer (its effects when it committed, and the badge log
    /// rows other nodes appended either way); how the commit ended. Under ``gate``.
    /// - Parameter last: whether no decision follows (a change then counts toward the back-off).
    func outcome(of commit: KeptDataCommit, _ answer: PostgresCommitCombiner.Answer, last: Bool) -> OneRoundTripOutcome {
        let readOn: Bool
        if kept.dataVersion == commit.data, answer.dataVersion == commit.data, kept.badges?.lastID == commit.lastLog {
            do {
                try apply(commit, answer)
                readOn = true
            } catch {
                kept.forget()  // a log row this node cannot read: read everything again under the lock
                readOn = false
            }
        } else {
            readOn = false
        }
        guard answer.committed else {
            if readOn && !answer.appended.isEmpty && !last {
                oneRoundTrip.recounted()
                return .countedElsewhere
            }
            oneRoundTrip.changed()
            return .changed
        }
        if !readOn { kept.forget() }  // committed, but what the node keeps is not at its version
        oneRoundTrip.committed()
        return .committed
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

    /// How often an update is decided on what the node keeps: always while those commits succeed;
    /// after one finds a change (two nodes writing one app), the next few updates go to the lock first, twice as many after each change in a row (at most 64).
    final class OneRoundTripPolicy: Sendable {
        private struct State {
            var skip = 0
            var backoff = 1
        }
        private let state = Mutex(State())
        /// Updates committed in one round trip; updates whose check found a change; commits whose check
        /// found only another node's counters (decided again); updates that read something not kept.
        let committedCount = StatementCounter(), changedCount = StatementCounter(), recountedCount = StatementCounter(), missedCount = StatementCounter()
        /// Updates read and decided under the write lock.
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

/// What an update decided on kept data commits: what it read (to check) and what it writes.
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

    /// The call of the app's schema's `pushbridge_commit_logged` with every array, its parameters appended to `binds`.
    func call(scope: CommitScope, binds: inout PostgresBindings) -> String {
        let first = binds.count + 1
        let (badges, deliveries, records) = (effects.badges, effects.deliveries, effects.records)
        let reads = self.reads.sorted { $0.key < $1.key }
        let rolls = self.rolls.sorted { $0.key < $1.key }
        binds.append(scope.app)
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
        binds.appendOutboxColumns(deliveries)
        binds.appendRecordColumns(records)
        binds.append(pruneBefore?.milliseconds)
        // The schema is a checked identifier (PostgresLocation.checkSchema): the call needs no search path.
        return "\(scope.schema).pushbridge_commit_logged(\(binds.placeholders(from: first)))"
    }
}

extension PostgresBindings {
    /// Appends outbox rows as the commit functions take them: one array a column (`d_message`,
    /// `d_receiver`, `d_token`, `d_environment`, `d_bound_at`, `d_headers`, `d_payload`, `d_queued_at`).
    mutating func appendOutboxColumns(_ deliveries: [OutboxDelivery]) {
        append(deliveries.map(\.messageID))
        append(deliveries.map(\.receiver))
        append(deliveries.map(\.token))
        append(deliveries.map(\.environment.rawValue))
        append(deliveries.map(\.boundAt.milliseconds))
        append(deliveries.map { ByteBuffer(bytes: OutboxDelivery.encode($0.headers)) })
        append(deliveries.map { ByteBuffer(bytes: $0.payload) })
        append(deliveries.map(\.queuedAt.milliseconds))
    }

    /// Appends records as the commit functions take them (`r_message`, `r_sent_at`, `r_decisions`).
    mutating func appendRecordColumns(_ records: [SentMessage]) {
        append(records.map(\.id))
        append(records.map(\.sentAt.milliseconds))
        append(records.map { ByteBuffer(bytes: $0.decisions) })
    }

    /// The placeholders of the parameters from `first` (1-based) to the last, for a function call.
    func placeholders(from first: Int) -> String {
        (first...count).map { "$\($0)" }.joined(separator: ", ")
    }
}

/// The effects of an update's sends: counters (one a user row), outbox rows, records (one an id).
struct KeptDataEffects {
    var badges: [(key: UserKey, badge: Int)] = []
    var deliveries: [OutboxDelivery] = []
    var records: [SentMessage] = []
    var cutoff = Instant(milliseconds: .min)
}
