import PushBridgeCore
import PushBridgeRecordCoding

/// What sends, calls and membership changes read, named before anything is decided: the store
/// reads them all in one call (`PushStateTransaction/read(_:)`), and the decisions need nothing
/// else. Each key is added once (records and one-to-one audiences: as they come); its position is
/// where ``StateSnapshot`` answers it.
public struct StateKeys: Sendable {
    /// A sender as a decision reads it: its display name and, for a group message, its name card
    /// in that group.
    public struct Sender: Hashable, Sendable {
        public var user: UserID
        public var group: String?
        public init(user: UserID, group: String?) {
            self.user = user
            self.group = group
        }
    }

    /// Everyone a message reaches except its sender, loaded for deciding on a conversation.
    public struct Receivers: Hashable, Sendable {
        public var audience: Audience
        public var sender: UserID
        public var conversation: ConversationKey
        public init(audience: Audience, sender: UserID, conversation: ConversationKey) {
            self.audience = audience
            self.sender = sender
            self.conversation = conversation
        }
    }

    /// A message id whose record is read (the repeat check, Specification §10).
    public struct Record: Hashable, Sendable {
        public var id: String
        /// A record sent before it counts as forgotten.
        public var since: Instant
        public init(id: String, since: Instant) {
            self.id = id
            self.since = since
        }
    }

    /// A target a send names that must exist: a user with a record, a group with members or a profile.
    public enum Target: Hashable, Sendable {
        case user(UserID)
        case group(String)

        /// The target's id.
        public var id: String {
            switch self {
            case .user(let user): user
            case .group(let group): group
            }
        }
    }

    /// Whether the app configuration is read.
    public private(set) var app = false
    public private(set) var senders: [Sender] = []
    /// Groups whose profile is read.
    public private(set) var groupProfiles: [String] = []
    public private(set) var receivers: [Receivers] = []
    public private(set) var records: [Record] = []
    public private(set) var targets: [Target] = []
    /// Users whose whole record is read (a call's caller and the users it names).
    public private(set) var users: [UserID] = []
    /// Groups whose member list is read, as stored (a membership change's).
    public private(set) var memberLists: [String] = []
    /// Users whose push bindings are read (`UserTable/pushBindings(of:)`).
    public private(set) var bindings: [UserID] = []
    /// Device tokens whose owner is read (with the owner's record and push bindings).
    public private(set) var deviceOwners: [String] = []
    /// Groups whose message sequence is read.
    public private(set) var sequences: [String] = []
    /// Push labels read, by key (with their counts of users).
    public private(set) var labels: [String] = []
    /// Pages of labels or of a label's users read.
    public private(set) var labelPages: [LabelPage] = []
    /// Push tasks read.
    public private(set) var tasks: [TaskQuery] = []
    /// Message id prefixes whose outbox rows are counted (a push task's deliveries).
    public private(set) var deliveryCounts: [String] = []
    private var senderPositions: [Sender: Int] = [:]
    private var targetPositions: [Target: Int] = [:]
    private var userPositions: [UserID: Int] = [:]
    private var memberListPositions: [String: Int] = [:]
    private var profilePositions: [String: Int] = [:]
    private var bindingPositions: [UserID: Int] = [:]
    private var ownerPositions: [String: Int] = [:]
    private var sequencePositions: [String: Int] = [:]
    private var receiverPositions: [Receivers: Int] = [:]
    private var labelPositions: [String: Int] = [:]
    private var pagePositions: [LabelPage: Int] = [:]
    private var taskPositions: [TaskQuery: Int] = [:]
    private var countPositions: [String: Int] = [:]

    public init() {}

    /// Reads the app configuration.
    public mutating func addApp() { app = true }

    /// Adds a sender (once) and returns its position in ``StateSnapshot/senders``.
    public mutating func add(_ sender: Sender) -> Int { Self.add(sender, to: &senders, at: &senderPositions) }

    /// Adds a group's profile (once) and returns its position in ``StateSnapshot/groupProfiles``.
    public mutating func addProfile(of group: String) -> Int { Self.add(group, to: &groupProfiles, at: &profilePositions) }

    /// Adds an audience and returns its position in ``StateSnapshot/receivers``: a group's once (its
    /// members are many reads), one-to-one receivers as they come (reading them again costs less than
    /// looking them up).
    public mutating func add(_ receivers: Receivers) -> Int {
        guard case .group = receivers.audience else {
            self.receivers.append(receivers)
            return self.receivers.count - 1
        }
        return Self.add(receivers, to: &self.receivers, at: &receiverPositions)
    }

    /// Adds a message id's record and returns its position in ``StateSnapshot/records``: as it comes
    /// (a batch's ids are distinct but for a rare repeat, and reading one twice costs less than
    /// looking each up).
    public mutating func add(_ record: Record) -> Int {
        records.append(record)
        return records.count - 1
    }

    /// Adds a target that must exist (once) and returns its position in ``StateSnapshot/knownTargets``.
    public mutating func add(_ target: Target) -> Int { Self.add(target, to: &targets, at: &targetPositions) }

    /// Adds a user whose whole record is read (once) and returns its position in ``StateSnapshot/users``.
    public mutating func addUser(_ user: UserID) -> Int { Self.add(user, to: &users, at: &userPositions) }

    /// Adds a group whose member list is read (once) and returns its position in ``StateSnapshot/memberLists``.
    public mutating func addMembers(of group: String) -> Int { Self.add(group, to: &memberLists, at: &memberListPositions) }

    /// Adds a user whose push bindings are read (once) and returns its position in ``StateSnapshot/bindings``.
    public mutating func addBindings(of user: UserID) -> Int { Self.add(user, to: &bindings, at: &bindingPositions) }

    /// Adds a device token whose owner is read (once) and returns its position in ``StateSnapshot/deviceOwners``.
    public mutating func addOwner(ofDevice token: String) -> Int { Self.add(token, to: &deviceOwners, at: &ownerPositions) }

    /// Adds a group whose message sequence is read (once) and returns its position in ``StateSnapshot/sequences``.
    public mutating func addSequence(of group: String) -> Int { Self.add(group, to: &sequences, at: &sequencePositions) }

    /// Adds a push label read by key (once) and returns its position in ``StateSnapshot/labels``.
    public mutating func addLabel(_ key: String) -> Int { Self.add(key, to: &labels, at: &labelPositions) }

    /// Adds a page of labels or of a label's users (once) and returns its position in ``StateSnapshot/labelPages``.
    public mutating func addPage(_ page: LabelPage) -> Int { Self.add(page, to: &labelPages, at: &pagePositions) }

    /// Adds a query of push tasks (once) and returns its position in ``StateSnapshot/tasks``.
    public mutating func addTasks(_ query: TaskQuery) -> Int { Self.add(query, to: &tasks, at: &taskPositions) }

    /// Adds a message id prefix whose outbox rows are counted (once) and returns its position in ``StateSnapshot/deliveryCounts``.
    public mutating func addDeliveryCounts(ofMessagesStartingWith prefix: String) -> Int { Self.add(prefix, to: &deliveryCounts, at: &countPositions) }

    private static func add<Key: Hashable>(_ key: Key, to keys: inout [Key], at positions: inout [Key: Int]) -> Int {
        if let position = positions[key] { return position }
        positions[key] = keys.count
        keys.append(key)
        return keys.count - 1
    }
}

/// What a store read for ``StateKeys``, one answer per key at the key's position.
public struct StateSnapshot: Sendable {
    /// The app configuration, when it was asked for.
    public var app: AppConfiguration?
    /// Each sender, or `nil` for a user the store does not know.
    public var senders: [UserState?]
    /// Each group's profile bytes, or `nil` for a group that has none.
    public var groupProfiles: [[UInt8]?]
    /// Each audience's receivers, in audience order.
    public var receivers: [StoredReceivers]
    /// Each message id's record, or `nil` when the id was not sent since the key's instant.
    public var records: [StoredRecord?]
    /// Whether each target exists.
    public var knownTargets: [Bool]
    /// Each user's record, or `nil` for a user the store does not know.
    public var users: [UserRecord?]
    /// Each group's members in membership order (empty for an unknown group).
    public var memberLists: [[UserID]]
    /// Each user's push bindings.
    public var bindings: [[PushBinding]]
    /// Each device token's owner, or `nil` for a token no user has.
    public var deviceOwners: [DeviceOwner?]
    /// Each group's message sequence (0 before its first message).
    public var sequences: [Int64]
    /// Each push label, or `nil` for a key no label has.
    public var labels: [PushLabel?]
    /// Each page of labels or of a label's users.
    public var labelPages: [LabelPageRows]
    /// Each query's push tasks.
    public var tasks: [[PushTask]]
    /// Each prefix's outbox rows, counted by state.
    public var deliveryCounts: [OutboxCounts]

    public init(
        app: AppConfiguration?, senders: [UserState?], groupProfiles: [[UInt8]?], receivers: [StoredReceivers], records: [StoredRecord?] = [],
        knownTargets: [Bool] = [], users: [UserRecord?] = [], memberLists: [[UserID]] = [], bindings: [[PushBinding]] = [], deviceOwners: [DeviceOwner?] = [],
        sequences: [Int64] = [], labels: [PushLabel?] = [], labelPages: [LabelPageRows] = [],
        tasks: [[PushTask]] = [], deliveryCounts: [OutboxCounts] = []
    ) {
        self.app = app
        self.senders = senders
        self.groupProfiles = groupProfiles
        self.receivers = receivers
        self.records = records
        self.knownTargets = knownTargets
        self.users = users
        self.memberLists = memberLists
        self.bindings = bindings
        self.deviceOwners = deviceOwners
        self.sequences = sequences
        self.labels = labels
        self.labelPages = labelPages
        self.tasks = tasks
        self.deliveryCounts = deliveryCounts
    }
}

/// The user that has a device, as a change of the device reads it: its record and push bindings.
public struct DeviceOwner: Sendable {
    public var user: UserID
    public var record: UserRecord?
    public var bindings: [PushBinding]
    public init(user: UserID, record: UserRecord?, bindings: [PushBinding]) {
        self.user = user
        self.record = record
        self.bindings = bindings
    }
}

/// A sent message's record as read: its bytes, and the stored roll a `PBR4` record refers to.
public struct StoredRecord: Sendable {
    /// The record, byte for byte as written.
    public var bytes: [UInt8]
    /// The id and bytes of the roll the record refers to (`nil`: none, or not stored).
    public var roll: (id: Int64, bytes: [UInt8])?

    public init(bytes: [UInt8], roll: (id: Int64, bytes: [UInt8])?) {
        self.bytes = bytes
        self.roll = roll
    }

    /// A stored roll's bytes by id, as the record's decoding asks for them.
    public func roll(_ id: Int64) -> [UInt8]? { roll?.id == id ? roll?.bytes : nil }
}

extension PushStateTransaction {
    /// Whether a target exists: a user with a record, a group with members or a profile.
    public func exists(_ target: StateKeys.Target) throws -> Bool {
        switch target {
        case .user(let user): try sender(user, group: nil) != nil
        case .group(let group): try groupProfile(of: group) != nil || !members(of: group).isEmpty
        }
    }

    /// Reads every key, in the order the table methods take them (records and the rolls they refer
    /// to, app, senders, profiles, receivers, targets, users, member lists, bindings, device owners,
    /// sequences, labels, label pages, tasks, delivery counts): correct for any store; a store that can read
    /// them in fewer round trips does.
    public func read(_ keys: StateKeys) throws -> StateSnapshot {
        let records = try keys.records.isEmpty ? [] : sentMessages(keys.records.map { ($0.id, $0.since) }).map { found -> StoredRecord? in
            guard let bytes = found else { return nil }
            let roll = try SentMessageRecord.rollID(of: bytes).flatMap { id in try self.roll(id).map { (id, $0) } }
            return StoredRecord(bytes: bytes, roll: roll)
        }
        return StateSnapshot(
            app: keys.app ? try app() : nil,
            senders: try keys.senders.map { try sender($0.user, group: $0.group) },
            groupProfiles: try keys.groupProfiles.map { try groupProfile(of: $0) },
            receivers: try keys.receivers.map { try receivers(of: $0.audience, excluding: $0.sender, conversation: $0.conversation) },
            records: records,
            knownTargets: try keys.targets.map { try exists($0) },
            users: try keys.users.map { try user($0) },
            memberLists: try keys.memberLists.map { try members(of: $0) },
            bindings: try keys.bindings.map { try pushBindings(of: $0) },
            deviceOwners: try keys.deviceOwners.map { token in
                try owner(ofDevice: token).map { DeviceOwner(user: $0, record: try user($0), bindings: try pushBindings(of: $0)) }
            },
            sequences: try keys.sequences.map { try messageSequence(of: $0, advancing: false) },
            labels: try keys.labels.map { try label($0) },
            labelPages: try keys.labelPages.map { try page($0) },
            tasks: try keys.tasks.map { try tasks($0) },
            deliveryCounts: try keys.deliveryCounts.map { try outboxCounts(ofMessagesStartingWith: $0) })
    }
}
