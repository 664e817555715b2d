import PushBridgeCore
import Synchronization

/// The in-memory twin of ``SQLiteStateStore``: the same contract, no persistence.
///
/// A write transaction works on a copy that replaces the state only when the body returns.
public final class MemoryStateStore: TransactionStore {
    struct Contents: Sendable {
        var app = AppConfiguration()
        var users: [UserID: (key: UserKey, record: UserRecord)] = [:]
        var byKey: [UserKey: UserID] = [:]
        var groups: [String: [UserID]] = [:]
        /// Groups' profiles and message sequences.
        var groupProfiles: [String: (profile: [UInt8]?, sequence: Int64)] = [:]
        /// Devices bound through vendor REST, by user.
        var pushBindings: [UserID: [PushBinding]] = [:]
        /// Who has each device token.
        var deviceOwners: [String: UserID] = [:]
        /// Push labels by key (their counts are not kept here), and each label's users.
        var labels: [String: PushLabel] = [:]
        var labelUsers: [String: [UserID: Instant]] = [:]
        /// Attribute names by slot, and each user's values by name.
        var attributeNames: [Int: String] = [:]
        var userAttributes: [UserID: [String: String]] = [:]
        /// Push tasks by id.
        var tasks: [Int64: PushTask] = [:]
        /// Sent message ids: when, and the encoded decisions.
        var sent: [String: (at: Instant, decisions: [UInt8])] = [:]
        var nextKey: Int64 = 1
        /// The delivery outbox, by id (ids grow: queue order).
        var outbox: [Int64: OutboxRow] = [:]
        var nextDeliveryID: Int64 = 1

        mutating func key(for user: UserID) -> UserKey {
            if let existing = users[user] { return existing.key }
            let key = UserKey(rawValue: nextKey)
            nextKey += 1
            users[user] = (key, .placeholder(user))
            byKey[key] = user
            return key
        }
    }

    /// One outbox row: the delivery and where it stands.
    struct OutboxRow: Sendable {
        var delivery: OutboxDelivery
        var dueAt: Instant
        var claimedUntil: Instant?
        var state: DeliveryState = .queued
        var status: Int?
        var reason: String?
        var updatedAt: Instant
        var deviceRemoved = false
    }

    private let contents = Mutex(Contents())

    /// An empty store.
    public init() {}

    package func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        try contents.withLock { contents in
            let transaction = Transaction(contents, writable: true)
            let result = try body(transaction)
            contents = transaction.contents
            return result
        }
    }

    /// Reads, decides and commits in one write (nothing else writes meanwhile).
    public func update<Outcome: Sendable>(
        reading keys: StateKeys, deciding decide: @escaping @Sendable (StateSnapshot) throws -> (changes: StateChanges, outcome: Outcome)
    ) async throws -> Outcome {
        try write { try $0.update(reading: keys, deciding: decide) }
    }

    package func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T {
        let snapshot = contents.withLock { $0 }
        return try body(Transaction(snapshot, writable: false))
    }

    final class Transaction: PushStateTransaction {
        var contents: Contents
        let writable: Bool

        init(_ contents: Contents, writable: Bool) {
            self.contents = contents
            self.writable = writable
        }

        func checkWritable() throws {
            guard writable else { throw StoreError.changeInReadTransaction }
        }

        func app() throws -> AppConfiguration { contents.app }

        func setApp(_ app: AppConfiguration) throws {
            try checkWritable()
            contents.app = app
        }

        func user(_ id: UserID) throws -> UserRecord? { contents.users[id]?.record }

        func save(_ state: UserState, replacing previous: UserState?) throws {
            try checkWritable()
            let key = contents.key(for: state.user)
            let before = contents.users[state.user]?.record.state.devices ?? []
            for device in before where !state.devices.contains(where: { $0.token == device.token }) {
                contents.deviceOwners[device.token] = nil
            }
            for device in state.devices {
                if let owner = contents.deviceOwners[device.token], owner != state.user {
                    contents.users[owner]?.record.state.removeDevice(token: device.token)
                }
                contents.deviceOwners[device.token] = state.user
            }
            contents.users[state.user] = (key, UserRecord(state: state, isConfigured: true))
        }

        func owner(ofDevice token: String) throws -> UserID? { contents.deviceOwners[token] }

        func removeUser(_ id: UserID) throws -> Bool {
            try checkWritable()
            guard let (key, record) = contents.users.removeValue(forKey: id) else { return false }
            contents.byKey[key] = nil
            for device in record.state.devices { contents.deviceOwners[device.token] = nil }
            for (group, members) in contents.groups where members.contains(id) {
                let rest = members.filter { $0 != id }
                contents.groups[group] = rest.isEmpty ? nil : rest
            }
            contents.pushBindings[id] = nil
            for label in contents.labelUsers.keys { contents.labelUsers[label]?[id] = nil }
            contents.userAttributes[id] = nil
            return true
        }

        func pushBindings(of user: UserID) throws -> [PushBinding] { contents.pushBindings[user] ?? [] }

        func setPushBindings(_ bindings: [PushBinding], of user: UserID) throws {
            try checkWritable()
            contents.pushBindings[user] = bindings.isEmpty ? nil : bindings
        }

        func groupProfile(of group: String) throws -> [UInt8]? { contents.groupProfiles[group]?.profile }

        func setGroupProfile(_ profile: [UInt8]?, of group: String) throws {
            try checkWritable()
            if let profile {
                contents.groupProfiles[group, default: (nil, 0)].profile = profile
            } else {
                contents.groupProfiles[group] = nil
            }
        }

        func groups(containing user: UserID?) throws -> [String] {
            if let user { return contents.groups.filter { $0.value.contains(user) }.keys.sorted() }
            return Set(contents.groups.filter { !$0.value.isEmpty }.keys).union(contents.groupProfiles.filter { $0.value.profile != nil }.keys).sorted()
        }

        func messageSequence(of group: String, advancing: Bool) throws -> Int64 {
            guard advancing else { return contents.groupProfiles[group]?.sequence ?? 0 }
            try checkWritable()
            contents.groupProfiles[group, default: (nil, 0)].sequence += 1
            return contents.groupProfiles[group]!.sequence
        }

        func sentMessage(_ id: String, since cutoff: Instant) throws -> [UInt8]? {
            guard let sent = contents.sent[id], sent.at >= cutoff else { return nil }
            return sent.decisions
        }

        func recordSentMessage(_ id: String, at instant: Instant, decisions: [UInt8], forgettingBefore cutoff: Instant) throws {
            try checkWritable()
            contents.sent = contents.sent.filter { $0.value.at >= cutoff }
            contents.sent[id] = (instant, decisions)
        }

        func enqueueDeliveries(_ deliveries: [OutboxDelivery]) throws {
            try checkWritable()
            for var delivery in deliveries {
                delivery.id = contents.nextDeliveryID
                delivery.attempts = 0
                contents.nextDeliveryID += 1
                contents.outbox[delivery.id] = OutboxRow(delivery: delivery, dueAt: delivery.queuedAt, updatedAt: delivery.queuedAt)
            }
        }

        func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) throws -> [OutboxDelivery] {
            try checkWritable()
            let due = contents.outbox.values.filter { $0.state == .queued && $0.dueAt <= now && ($0.claimedUntil.map { $0 <= now } ?? true) }
                .sorted { ($0.delivery.lane, $0.dueAt, $0.delivery.id) < ($1.delivery.lane, $1.dueAt, $1.delivery.id) }
            let chat = due.prefix { $0.delivery.lane == 0 }.prefix(max(0, limit))
            let tasks = due.dropFirst(chat.count).filter { $0.delivery.lane == 1 }.prefix(max(0, min(taskLimit, limit - chat.count)))
            var out: [OutboxDelivery] = []
            for row in chat + tasks {
                contents.outbox[row.delivery.id]?.claimedUntil = claimUntil
                out.append(row.delivery)
            }
            return out.sorted { $0.id < $1.id }
        }

        func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) throws {
            try checkWritable()
            for s in settlements {
                guard var row = contents.outbox[s.id], row.state == .queued else { continue }
                row.state = s.state
                row.status = s.status
                row.reason = s.reason
                if let retryAt = s.retryAt { row.dueAt = retryAt }
                row.claimedUntil = nil
                row.delivery.attempts += 1
                row.updatedAt = now
                row.deviceRemoved = s.deviceRemoved
                contents.outbox[s.id] = row
            }
        }

        func releaseDeliveryClaims() throws {
            try checkWritable()
            for id in contents.outbox.keys { contents.outbox[id]?.claimedUntil = nil }
        }

        func nextDeliveryDue() throws -> Instant? {
            contents.outbox.values.filter { $0.state == .queued }.map { max($0.dueAt, $0.claimedUntil ?? $0.dueAt) }.min()
        }

        func deliveries(ofMessage id: String) throws -> [DeliveryRecord] {
            contents.outbox.values.filter { $0.delivery.messageID == id }.sorted { $0.delivery.id < $1.delivery.id }.map {
                DeliveryRecord(
                    id: $0.delivery.id, receiver: $0.delivery.receiver, token: $0.delivery.token, state: $0.state, attempts: $0.delivery.attempts,
                    status: $0.status, reason: $0.reason, updatedAt: $0.updatedAt, deviceRemoved: $0.deviceRemoved)
            }
        }

        func pruneDeliveries(settledBefore cutoff: Instant) throws -> Int {
            try checkWritable()
            let old = contents.outbox.values.filter { $0.state != .queued && $0.updatedAt < cutoff }.map(\.delivery.id)
            for id in old { contents.outbox[id] = nil }
            return old.count
        }

        func outboxCounts() throws -> OutboxCounts { counts(contents.outbox.values) }

        func queuedDeliveryCount() throws -> Int { contents.outbox.values.count { $0.state == .queued } }

        func outboxCounts(ofMessagesStartingWith prefix: String) throws -> OutboxCounts {
            counts(contents.outbox.values.filter { $0.delivery.messageID.hasPrefix(prefix) })
        }

        private func counts(_ rows: some Sequence<OutboxRow>) -> OutboxCounts {
            var counts = OutboxCounts(queued: 0, delivered: 0, failed: 0)
            for row in rows {
                switch row.state {
                case .queued: counts.queued += 1
                case .delivered: counts.delivered += 1
                case .failed: counts.failed += 1
                }
            }
            return counts
        }

        func members(of group: String) throws -> [UserID] { contents.groups[group] ?? [] }

        func setMembers(_ members: [UserID], of group: String) throws {
            try checkWritable()
            for member in members { _ = contents.key(for: member) }
            contents.groups[group] = members.isEmpty ? nil : members
        }

        func receivers(of audience: Audience, excluding sender: UserID, conversation: ConversationKey) throws -> StoredReceivers {
            let ids: [UserID]
            switch audience {
            case .users(let users): ids = users
            case .group(let group): ids = contents.groups[group] ?? []
            }
            var seen = Set<UserID>()
            var out: [StoredReceiver] = []
            for id in ids where id != sender && seen.insert(id).inserted {
                guard let (key, record) = contents.users[id] else {
                    out.append(StoredReceiver(key: nil, state: UserRecord.placeholder(id).state, isConfigured: false))
                    continue
                }
                var state = record.state
                state.conversations = state.conversations[conversation].map { [conversation: $0] } ?? [:]
                state.nameCards = [:]
                out.append(StoredReceiver(key: key, state: state, isConfigured: record.isConfigured))
            }
            return StoredReceivers(out)
        }

        func setBadges(_ badges: [(key: UserKey, badge: Int)]) throws {
            try checkWritable()
            for (key, badge) in badges {
                guard let id = contents.byKey[key] else { throw StoreError(.unexpectedValue, "no user with key \(key.rawValue)") }
                contents.users[id]?.record.state.badge = badge
            }
        }
    }
}
