import Foundation
import PostgresNIO
import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeStore

// The store's writes and reads as PushBridgeStore's contract has them: keys read, a decision made on
// the snapshot, its changes committed — every statement awaited.

extension PostgresStateStore {
    /// Reads `keys`, decides, and commits what was decided, holding no thread while the server
    /// answers: on what the node keeps with a one-round-trip commit that checks what was read, when
    /// the node keeps it all and the changes are a send's effects; else read, decided and committed
    /// in one transaction under the write lock. `decide` runs once a read (again when a commit found
    /// that what was read moved, or when it refused or had nothing to write on what the node keeps: only
    /// the lock's read can say that is so).
    public func update<Outcome: Sendable>(
        reading keys: StateKeys, deciding decide: @escaping @Sendable (StateSnapshot) throws -> (changes: StateChanges, outcome: Outcome)
    ) async throws -> Outcome {
        await gate.enter()
        defer { gate.leave() }
        if oneRoundTrip.shouldTry() {
            for decision in 1...Self.maximumDecisions {
                guard let read = keptRead(keys) else {
                    oneRoundTrip.missed()
                    break
                }
                // A refusal, or nothing to write, checks nothing: it is decided again on what the lock
                // reads (what the node keeps may be behind another node's writes).
                guard let (changes, outcome) = try? decide(read.snapshot), !changes.isEmpty, let commit = keptCommit(of: changes, read: read) else { break }
                let answer = try await pool.commits.commit(commit, scope: commitScope, on: pool)
                switch self.outcome(of: commit, answer, last: decision == Self.maximumDecisions) {
                case .committed: return outcome
                case .countedElsewhere: continue
                case .changed: break
                }
                break
            }
        }
        let ids = Array(Set(keys.records.map(\.id).filter { !$0.isEmpty })).sorted()
        return try await inWriteTransaction(readingRecordsOf: ids) { transaction in
            let (changes, outcome) = try decide(try await transaction.read(keys))
            if !changes.isEmpty { try await transaction.commit(changes) }
            oneRoundTrip.lockedCount.add()
            return outcome
        }
    }

    /// Reads `keys` in one snapshot (repeatable read), taking no lock.
    public func snapshot(_ keys: StateKeys) async throws -> StateSnapshot {
        try await reading { try await $0.read(keys) }
    }

    /// The groups `user` is a member of (every group, for `nil`), in one snapshot.
    public func groups(containing user: UserID?) async throws -> [String] {
        try await reading { try await $0.groups(containing: user) }
    }

    /// A message's deliveries, in one snapshot.
    public func deliveries(ofMessage id: String) async throws -> [DeliveryRecord] {
        try await reading { try await $0.deliveries(ofMessage: id) }
    }
}

extension PostgresStateStore.Transaction {
    /// Whether a target exists: a user with a record, a group with members or a profile.
    func exists(_ target: StateKeys.Target) async throws -> Bool {
        switch target {
        case .user(let user): return try await sender(user, group: nil) != nil
        case .group(let group):
            if try await groupProfile(of: group) != nil { return true }
            return try await !members(of: group).isEmpty
        }
    }

    /// Reads every key (records and the rolls they refer to, app, senders, profiles, receivers,
    /// targets, users, member lists, bindings, device owners, sequences, labels, label pages, tasks, delivery counts); what the node keeps answers
    /// in a write.
    func read(_ keys: StateKeys) async throws -> StateSnapshot {
        var records: [StoredRecord?] = []
        if !keys.records.isEmpty {
            for found in try await sentMessages(keys.records.map { ($0.id, $0.since) }) {
                guard let bytes = found else {
                    records.append(nil)
                    continue
                }
                var roll: (id: Int64, bytes: [UInt8])?
                if let id = SentMessageRecord.rollID(of: bytes), let stored = try await self.roll(id) { roll = (id, stored) }
                records.append(StoredRecord(bytes: bytes, roll: roll))
            }
        }
        var snapshot = StateSnapshot(app: keys.app ? try await app() : nil, senders: [], groupProfiles: [], receivers: [], records: records)
        for sender in keys.senders { snapshot.senders.append(try await self.sender(sender.user, group: sender.group)) }
        for group in keys.groupProfiles { snapshot.groupProfiles.append(try await groupProfile(of: group)) }
        // Several sends' one-to-one receivers the node does not keep (a campaign's page): one statement a conversation.
        var together: [ConversationKey: [UserID: StoredReceiver]] = [:]
        if keys.receivers.count > 1 {
            var names: [ConversationKey: [UserID]] = [:]
            for key in keys.receivers {
                guard case .users(let users) = key.audience else { continue }
                let wanted = PostgresStateStore.KeptOneToOne.wanted(users, excluding: key.sender)
                if context.keptData?.users.receivers(wanted, in: key.conversation) == nil { names[key.conversation, default: []] += wanted }
            }
            for (conversation, wanted) in names where wanted.count > 1 {
                let unique = PostgresStateStore.KeptOneToOne.wanted(wanted, excluding: "")
                let found = try await oneToOneReceivers(unique, conversation: conversation)
                together[conversation] = Dictionary(zip(unique, found), uniquingKeysWith: { first, _ in first })
                if let kept = context.keptData?.users { for receiver in found { kept.keep(receiver, in: conversation) } }
            }
        }
        for key in keys.receivers {
            if case .users(let users) = key.audience, let found = together[key.conversation] {
                let wanted = PostgresStateStore.KeptOneToOne.wanted(users, excluding: key.sender)
                let receivers = wanted.compactMap { found[$0] }
                if receivers.count == wanted.count {
                    snapshot.receivers.append(StoredReceivers(receivers))
                    continue
                }
            }
            snapshot.receivers.append(try await receivers(of: key.audience, excluding: key.sender, conversation: key.conversation))
        }
        let userTargets = keys.targets.compactMap { target -> UserID? in if case .user(let user) = target { user } else { nil } }
        let existing = userTargets.count > 1 ? try await existingUsers(userTargets) : nil
        for target in keys.targets {
            if let existing, case .user(let user) = target {
                snapshot.knownTargets.append(existing.contains(user))
            } else {
                snapshot.knownTargets.append(try await exists(target))
            }
        }
        snapshot.users = try await users(keys.users)
        for group in keys.memberLists { snapshot.memberLists.append(try await members(of: group)) }
        for user in keys.bindings { snapshot.bindings.append(try await pushBindings(of: user)) }
        for token in keys.deviceOwners {
            guard let owner = try await owner(ofDevice: token) else {
                snapshot.deviceOwners.append(nil)
                continue
            }
            snapshot.deviceOwners.append(DeviceOwner(user: owner, record: try await user(owner), bindings: try await pushBindings(of: owner)))
        }
        for group in keys.sequences { snapshot.sequences.append(try await messageSequence(of: group, advancing: false)) }
        for key in keys.labels { snapshot.labels.append(try await label(key)) }
        for page in keys.labelPages { snapshot.labelPages.append(try await self.page(page)) }
        for query in keys.tasks { snapshot.tasks.append(try await tasks(query)) }
        for prefix in keys.deliveryCounts { snapshot.deliveryCounts.append(try await outboxCounts(ofMessagesStartingWith: prefix)) }
        return snapshot
    }

    /// Writes `changes` in the order ``PushBridgeStore/StateChanges`` gives: the app, removals, users'
    /// states, bindings, groups' members, profiles and sequences, labels, tasks, the rolls the records refer to, then
    /// counters, outbox rows and records in one statement.
    func commit(_ changes: StateChanges) async throws {
        if let app = changes.app { try await setApp(app) }
        for user in changes.removedUsers { _ = try await removeUser(user) }
        for user in changes.users { try await save(user.state, replacing: user.previous) }
        for change in changes.bindings { try await setPushBindings(change.bindings, of: change.user) }
        for group in changes.groups {
            if let members = group.members { try await setMembers(members, of: group.group) }
            if let profile = group.profile { try await setGroupProfile(profile, of: group.group) }
            for _ in 0..<group.sequenceAdvances { _ = try await messageSequence(of: group.group, advancing: true) }
        }
        for change in changes.labels { try await apply(change) }
        for task in changes.tasks { try await saveTask(task) }
        var records: [SentMessage] = []
        records.reserveCapacity(changes.records.count)
        for record in changes.records {
            var rollID: Int64 = 0
            if let roll = record.pendingRoll { rollID = try await storeRoll(roll, usedAt: record.sentAt, encoded: record.encodedRoll) }
            records.append(record.sentMessage(storedRoll: rollID))
        }
        try await writeSendEffects(badges: changes.badges, deliveries: changes.deliveries, records: records, forgettingBefore: changes.cutoff)
    }
}

extension PostgresStateStore: CommitTurns {
    /// Runs a writer's group at its turn: when the node's statement in flight (its apps' commits
    /// share each one) has ended; the next statement waits briefly for this group's commit.
    public func withCommitTurn<T: Sendable>(_ group: () async throws -> T) async rethrows -> T {
        await pool.commits.nextTurn(scope: commitScope)
        defer { pool.commits.passTurn(scope: commitScope) }
        return try await group()
    }
}
