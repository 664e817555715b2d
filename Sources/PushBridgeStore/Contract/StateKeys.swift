import PushBridgeCore

/// What sends read, named before anything is decided: the store reads them all in one call
/// (``PushStateTransaction/read(_:)``), and the decisions need nothing else. Each key is added once;
/// its position is where ``StateSnapshot`` answers it.
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

    /// Whether the app configuration is read.
    public private(set) var app = false
    public private(set) var senders: [Sender] = []
    /// Groups whose profile is read.
    public private(set) var groupProfiles: [String] = []
    public private(set) var receivers: [Receivers] = []
    private var senderPositions: [Sender: Int] = [:]
    private var profilePositions: [String: Int] = [:]
    private var receiverPositions: [Receivers: Int] = [:]

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

    public init(app: AppConfiguration?, senders: [UserState?], groupProfiles: [[UInt8]?], receivers: [StoredReceivers]) {
        self.app = app
        self.senders = senders
        self.groupProfiles = groupProfiles
        self.receivers = receivers
    }
}

extension PushStateTransaction {
    /// Reads every key, in the order the table methods take them (app, senders, profiles, receivers):
    /// correct for any store; a store that can read them in fewer round trips does.
    public func read(_ keys: StateKeys) throws -> StateSnapshot {
        StateSnapshot(
            app: keys.app ? try app() : nil,
            senders: try keys.senders.map { try sender($0.user, group: $0.group) },
            groupProfiles: try keys.groupProfiles.map { try groupProfile(of: $0) },
            receivers: try keys.receivers.map { try receivers(of: $0.audience, excluding: $0.sender, conversation: $0.conversation) })
    }
}
