import PushBridgeCore
import PushBridgeRecordCoding

/// What sends and calls decided to change, as a value: users' states, the counters, the outbox rows
/// and the records, written together by `PushStateTransaction/commit(_:)` once everything is decided.
public struct StateChanges: Sendable {
    /// A user's new state, and the state it replaces as it was read (`nil`: a user not configured yet).
    public struct UserChange: Sendable {
        public var state: UserState
        public var previous: UserState?
        public init(state: UserState, previous: UserState?) {
            self.state = state
            self.previous = previous
        }
    }

    /// A group's new members or profile.
    public struct GroupChange: Sendable {
        public var group: String
        /// The members to store, in order (`GroupTable/setMembers(_:of:)`); `nil`: unchanged.
        public var members: [UserID]?
        /// The profile to store (`GroupTable/setGroupProfile(_:of:)`; `.some(nil)` forgets it and the
        /// group's message sequence); `nil`: unchanged.
        public var profile: [UInt8]??
        /// How many messages move the group's message sequence on (after the profile).
        public var sequenceAdvances: Int
        public init(group: String, members: [UserID]? = nil, profile: [UInt8]?? = nil, sequenceAdvances: Int = 0) {
            self.group = group
            self.members = members
            self.profile = profile
            self.sequenceAdvances = sequenceAdvances
        }
    }

    /// A user's push bindings, replaced.
    public struct BindingChange: Sendable {
        public var user: UserID
        public var bindings: [PushBinding]
        public init(user: UserID, bindings: [PushBinding]) {
            self.user = user
            self.bindings = bindings
        }
    }

    /// The app configuration to store, first (`nil`: unchanged).
    public var app: AppConfiguration?
    /// Users to forget (`UserTable/removeUser(_:)`: settings, devices, counter, memberships), after
    /// the app and before the users' states.
    public var removedUsers: [UserID]

    /// Users' states to store, in order (`UserTable/save(_:replacing:)`), before everything else.
    public var users: [UserChange]
    /// Push bindings to store, in order, after the users.
    public var bindings: [BindingChange]
    /// Groups' members and profiles to store, in order, after the bindings.
    public var groups: [GroupChange]
    /// Push label changes, in order, after the groups.
    public var labels: [LabelChange]
    /// Push tasks to store (new, or replacing the stored one with their id), after the labels.
    public var tasks: [PushTask]
    /// Badge counters, one entry per user row (its latest counter).
    public var badges: [(key: UserKey, badge: Int)]
    /// Outbox rows, in the order they were decided.
    public var deliveries: [OutboxDelivery]
    /// Sent-message records, in the order they were decided (an id once).
    public var records: [RecordChange]
    /// Records sent before this instant may be forgotten.
    public var cutoff: Instant

    public init(
        app: AppConfiguration? = nil, removedUsers: [UserID] = [], users: [UserChange] = [], bindings: [BindingChange] = [], groups: [GroupChange] = [], labels: [LabelChange] = [], tasks: [PushTask] = [], badges: [(key: UserKey, badge: Int)] = [], deliveries: [OutboxDelivery] = [], records: [RecordChange] = [],
        cutoff: Instant = Instant(milliseconds: .min)
    ) {
        self.app = app
        self.removedUsers = removedUsers
        self.users = users
        self.bindings = bindings
        self.groups = groups
        self.labels = labels
        self.tasks = tasks
        self.badges = badges
        self.deliveries = deliveries
        self.records = records
        self.cutoff = cutoff
    }

    /// Whether there is nothing to write.
    public var isEmpty: Bool {
        app == nil && removedUsers.isEmpty && users.isEmpty && bindings.isEmpty && groups.isEmpty && labels.isEmpty && tasks.isEmpty && badges.isEmpty && deliveries.isEmpty && records.isEmpty
    }
}

/// A sent message's record as decided: its bytes, or, for a kept group's decisions written against
/// its roll's rows, what makes them once the roll is stored (the stored roll's id is in the record).
public struct RecordChange: Sendable {
    /// A `PBR4` record waiting for its roll's id.
    public struct OnRoll: @unchecked Sendable {  // the writer is a value; its templates are immutable payload templates
        package let writer: SentMessageRecord.DecisionWriter
        package let roll: ReceiverRoll
        package let rows: [StoredReceiver]
        package let skipped: Int?
        package init(writer: SentMessageRecord.DecisionWriter, roll: ReceiverRoll, rows: [StoredReceiver], skipped: Int?) {
            self.writer = writer
            self.roll = roll
            self.rows = rows
            self.skipped = skipped
        }
    }

    public enum Bytes: Sendable {
        /// The record's bytes.
        case encoded([UInt8])
        /// Made from the stored roll's id.
        case onRoll(OnRoll)
    }

    public var id: String
    public var sentAt: Instant
    /// How many decisions it holds.
    public var count: Int
    public var bytes: Bytes

    public init(id: String, sentAt: Instant, count: Int, bytes: Bytes) {
        self.id = id
        self.sentAt = sentAt
        self.count = count
        self.bytes = bytes
    }

    /// The roll the record refers to, while it waits for the stored roll's id (`nil`: its bytes are made).
    public var pendingRoll: ReceiverRoll? {
        if case .onRoll(let pending) = bytes { pending.roll } else { nil }
    }

    /// The roll's rows as stored (`SentMessageRecord.encodeRoll(_:)`), for a record with a pending roll.
    public func encodedRoll() -> [UInt8] {
        if case .onRoll(let pending) = bytes { SentMessageRecord.encodeRoll(pending.rows.map(\.state)) } else { [] }
    }

    /// The record as written, given the stored id of its pending roll (ignored when it has none).
    /// - Parameter rollID: the stored roll's id.
    public func sentMessage(storedRoll rollID: Int64) -> SentMessage {
        switch bytes {
        case .encoded(let bytes): SentMessage(id: id, sentAt: sentAt, decisions: bytes)
        case .onRoll(let pending): SentMessage(id: id, sentAt: sentAt, decisions: pending.writer.record(count: count, roll: (rollID, pending.skipped)))
        }
    }
}

extension PushStateTransaction {
    /// Stores the app, forgets the removed users, saves the users' states, their bindings and the
    /// groups' members, profiles and sequences, the label changes and tasks, stores the rolls the records refer to, then writes
    /// counters, outbox rows and records with ``writeSendEffects(badges:deliveries:records:forgettingBefore:)``: correct for any store.
    public func commit(_ changes: StateChanges) throws {
        if let app = changes.app { try setApp(app) }
        for user in changes.removedUsers { _ = try removeUser(user) }
        for user in changes.users { try save(user.state, replacing: user.previous) }
        for change in changes.bindings { try setPushBindings(change.bindings, of: change.user) }
        for group in changes.groups {
            if let members = group.members { try setMembers(members, of: group.group) }
            if let profile = group.profile { try setGroupProfile(profile, of: group.group) }
            for _ in 0..<group.sequenceAdvances { _ = try messageSequence(of: group.group, advancing: true) }
        }
        for change in changes.labels { try apply(change) }
        for task in changes.tasks { try saveTask(task) }
        var records: [SentMessage] = []
        records.reserveCapacity(changes.records.count)
        for record in changes.records {
            let rollID = try record.pendingRoll.map { roll in try storeRoll(roll, usedAt: record.sentAt, encoded: record.encodedRoll) } ?? 0
            records.append(record.sentMessage(storedRoll: rollID))
        }
        try writeSendEffects(badges: changes.badges, deliveries: changes.deliveries, records: records, forgettingBefore: changes.cutoff)
    }
}
