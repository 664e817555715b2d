import PushBridgeCore

/// A push label (Easemob / Agora Chat `/push/label`): a named set of the app's users a push task
/// can go to.
public struct PushLabel: Hashable, Sendable {
    /// How the label is found: its name, or its name in lower case where names ignore case (Agora Chat).
    public var key: String
    /// The name as created.
    public var name: String
    /// What it is for (may be empty).
    public var description: String
    /// When it was created.
    public var createdAt: Instant
    /// How many users it has, as read (0 for a label being created).
    public var count: Int

    /// - Parameters:
    ///   - key: the name, or its lower case where names ignore case.
    ///   - name: the name as created.
    ///   - description: what it is for.
    ///   - createdAt: when it was created.
    ///   - count: its users, as read.
    public init(key: String, name: String, description: String, createdAt: Instant, count: Int = 0) {
        self.key = key
        self.name = name
        self.description = description
        self.createdAt = createdAt
        self.count = count
    }
}

/// One user of a push label, and when it was added.
public struct LabelUser: Hashable, Sendable {
    public var user: UserID
    public var addedAt: Instant
    public init(user: UserID, addedAt: Instant) {
        self.user = user
        self.addedAt = addedAt
    }
}

/// A page of labels or of a label's users, in key order after a cursor (``StateKeys/addPage(_:)``).
public enum LabelPage: Hashable, Sendable {
    /// Labels whose key follows `after` (all, for `nil`), at most `limit`.
    case labels(after: String?, limit: Int)
    /// A label's users whose name follows `after`, at most `limit`.
    case users(label: String, after: UserID?, limit: Int)
    /// One user of a label: the user, or none when it is not the label's.
    case user(label: String, user: UserID)
    /// A push task's receivers whose name follows `after`, at most `limit` (each with the time it was
    /// first added to one of the audience's labels; 0 for every user of the app).
    case audience(TaskAudience, after: UserID?, limit: Int)
    /// The labels a user is in (each with its count of users), in key order.
    case labelsOf(user: UserID)
    /// The app's attribute names, by slot (Tencent's `im_get_attr_name`: slots 0–9).
    case attributeNames
    /// A user's attribute values, in name order.
    case attributesOf(user: UserID)
}

/// What a ``LabelPage`` read.
public enum LabelPageRows: Sendable {
    case labels([PushLabel])
    case users([LabelUser])
    /// Attribute names by slot (``LabelPage/attributeNames``), or a user's values by name.
    case attributes([(key: String, value: String)])

    /// The attribute names or values read (none for a page of labels or users), in slot or name order.
    public var attributes: [(key: String, value: String)] {
        if case .attributes(let pairs) = self { pairs } else { [] }
    }

    /// The labels read (none for a page of users).
    public var labels: [PushLabel] {
        if case .labels(let labels) = self { labels } else { [] }
    }

    /// The users read (none for a page of labels).
    public var users: [LabelUser] {
        if case .users(let users) = self { users } else { [] }
    }
}

/// A change to the app's push labels (``StateChanges/labels``).
public enum LabelChange: Sendable {
    /// Stores a new label (its key is not taken).
    case create(PushLabel)
    /// Forgets a label and its users.
    case delete(key: String)
    /// Adds users to a label (a user already in it keeps its time).
    case addUsers(label: String, users: [UserID], at: Instant)
    /// Takes users out of a label (a user not in it is no change).
    case removeUsers(label: String, users: [UserID])
    /// Names attribute slots (a slot named already keeps its name: the caller checks).
    case nameAttributes([(slot: Int, name: String)])
    /// Sets a user's values of some attributes.
    case setAttributes(user: UserID, [UserAttribute])
    /// Takes a user's values of some attributes (one it does not have is no change).
    case removeAttributes(user: UserID, names: [String])
}

/// The app's push labels (and Tencent's attributes) in one transaction. Removing a user
/// (`UserTable/removeUser(_:)`) takes it out of every label and forgets its attribute values.
package protocol LabelTable {
    /// The label with `key`, with its count of users, or `nil`.
    func label(_ key: String) throws -> PushLabel?

    /// Reads one page of labels or of a label's users.
    func page(_ page: LabelPage) throws -> LabelPageRows

    /// Writes one change.
    func apply(_ change: LabelChange) throws
}
