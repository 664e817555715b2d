import PushBridgeCore
import PushBridgeJSON

/// Whom a push task pushes to: the users in every label of ``all``, in one of ``any`` at least, with
/// every value of ``attributes`` and one of ``anyAttributes`` at least (each condition that names
/// nothing holds for everyone); every user of the app when it names nothing.
public struct TaskAudience: Hashable, Sendable {
    /// Label keys a receiver is in, each one (Easemob / Agora Chat's `targets`, Tencent's `TagsAnd`).
    public var all: [String]
    /// Label keys a receiver is in one of at least (Tencent's `TagsOr`); empty: no such condition.
    public var any: [String]
    /// Attribute values a receiver has, each one (Tencent's `AttrsAnd`), in name order.
    public var attributes: [UserAttribute]
    /// Attribute values a receiver has one of at least (Tencent's `AttrsOr`); empty: no such condition.
    public var anyAttributes: [UserAttribute]

    /// - Parameters:
    ///   - all: labels a receiver is in, each one.
    ///   - any: labels a receiver is in one of (empty: no condition).
    ///   - attributes: attribute values a receiver has, each one.
    ///   - anyAttributes: attribute values a receiver has one of (empty: no condition).
    public init(all: [String] = [], any: [String] = [], attributes: [UserAttribute] = [], anyAttributes: [UserAttribute] = []) {
        self.all = all
        self.any = any
        self.attributes = attributes
        self.anyAttributes = anyAttributes
    }

    /// Every user of the app.
    public static let everyUser = TaskAudience()

    /// Whether it names nothing: every user of the app.
    public var isEveryUser: Bool { all.isEmpty && any.isEmpty && attributes.isEmpty && anyAttributes.isEmpty }

    /// Every label it names, `all`'s first.
    public var labels: [String] { all + any.filter { !all.contains($0) } }

    /// Whether a user with these labels and attribute values is in it.
    /// - Parameters:
    ///   - isIn: whether the user is in a label.
    ///   - value: the user's value of an attribute, or `nil`.
    public func admits(isIn: (String) -> Bool, value: (String) -> String?) -> Bool {
        all.allSatisfy(isIn) && (any.isEmpty || any.contains(where: isIn))
            && attributes.allSatisfy { value($0.name) == $0.value } && (anyAttributes.isEmpty || anyAttributes.contains { value($0.name) == $0.value })
    }

    /// The audience as stored: `{"all":[…],"any":[…],"attributes":[[name, value]…],"anyAttributes":[…]}`.
    public var encoded: String {
        func object(_ list: [UserAttribute]) -> JSONValue { .array(list.map { [.string($0.name), .string($0.value)] }) }
        return JSONValue.object(
            JSONObject([
                ("all", .array(all.map(JSONValue.string))), ("any", .array(any.map(JSONValue.string))), ("attributes", object(attributes)),
                ("anyAttributes", object(anyAttributes)),
            ])
        ).compactText
    }

    /// Reads ``encoded``.
    /// - Parameter text: the stored text.
    public static func decoded(_ text: String) throws -> TaskAudience {
        func keys(_ value: JSONValue?) throws -> [String] {
            guard case .array(let items)? = value else { throw StoreError(.unexpectedValue, "a task's audience is not {\"all\":[…],\"any\":[…]}", context: "push_tasks.audience") }
            return try items.map {
                guard case .string(let key) = $0 else { throw StoreError(.unexpectedValue, "a task's audience names a label that is not text", context: "push_tasks.audience") }
                return key
            }
        }
        func values(_ value: JSONValue?) throws -> [UserAttribute] {
            guard case .array(let pairs)? = value else { throw StoreError(.unexpectedValue, "a task's attribute condition is not an array", context: "push_tasks.audience") }
            return try pairs.map { pair in
                guard case .array(let parts) = pair, parts.count == 2, case .string(let name) = parts[0], case .string(let text) = parts[1] else {
                    throw StoreError(.unexpectedValue, "a task's attribute condition is not [name, value]", context: "push_tasks.audience")
                }
                return UserAttribute(name: name, value: text)
            }
        }
        guard case .object(let object) = try JSONParser.parse(text) else {
            throw StoreError(.unexpectedValue, "a task's audience is not a JSON object", context: "push_tasks.audience")
        }
        return TaskAudience(
            all: try keys(object["all"]), any: try keys(object["any"]), attributes: try values(object["attributes"] ?? .array([])),
            anyAttributes: try values(object["anyAttributes"] ?? .array([])))
    }
}

/// A user's value of one of the app's attributes (Tencent's `im_set_attr`).
public struct UserAttribute: Hashable, Sendable {
    /// The attribute's name (one of the app's attribute names).
    public var name: String
    /// The user's value.
    public var value: String

    /// - Parameters:
    ///   - name: the attribute's name.
    ///   - value: the value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A push task (a campaign): one vendor request that pushes to the users of some labels (or tags), or
/// of the app, decided a page of receivers at a time after it starts; stored, so it survives a restart.
public struct PushTask: Hashable, Sendable {
    /// Where a task stands.
    public enum State: Int, Hashable, Sendable {
        /// Waiting for its start, or deciding its receivers.
        case pending = 0
        /// Every receiver decided.
        case finished = 1
        /// Cancelled before it finished: no further receiver is decided.
        case cancelled = 2
    }

    /// The task id the vendor answer carries.
    public var id: Int64
    /// The vendor REST family whose body ``request`` is (`easemob`, `tencent`): it makes the messages.
    public var family: String
    /// Whom it pushes to.
    public var audience: TaskAudience
    /// The vendor's request body as given (compact JSON), read again for each page.
    public var request: [UInt8]
    public var createdAt: Instant
    /// When its first receivers are decided (its creation, or the scheduled start).
    public var startAt: Instant
    public var state: State
    /// The last receiver decided, in code-point order (`nil`: none yet).
    public var cursor: UserID?
    /// What was decided so far.
    public var progress: TaskProgress
    /// When it finished or was cancelled.
    public var endedAt: Instant?

    public init(
        id: Int64, family: String, audience: TaskAudience, request: [UInt8], createdAt: Instant, startAt: Instant, state: State = .pending,
        cursor: UserID? = nil, progress: TaskProgress = TaskProgress(), endedAt: Instant? = nil
    ) {
        self.id = id
        self.family = family
        self.audience = audience
        self.request = request
        self.createdAt = createdAt
        self.startAt = startAt
        self.state = state
        self.cursor = cursor
        self.progress = progress
        self.endedAt = endedAt
    }

    /// The prefix of the ids of the messages it makes: `pushtask-<id>-` (then the receiver).
    public var messagePrefix: String { Self.messagePrefix(of: id) }

    /// The prefix of the ids of the messages the task with `id` makes.
    public static func messagePrefix(of id: Int64) -> String { messageIDPrefix + "\(id)-" }

    /// What the ids of every task's messages begin with (their deliveries' lane, ``OutboxDelivery/lane``;
    /// the stores compute it from the id in the same way).
    public static let messageIDPrefix = "pushtask-"

    /// Records a page decided: the cursor moves to its last receiver, its progress is added, and the
    /// task finishes when it was the last page.
    /// - Parameters:
    ///   - page: what the page decided.
    ///   - last: its last receiver (`nil`: an empty page; the cursor stays).
    ///   - finished: whether it was the task's last page.
    ///   - now: when it was recorded.
    public mutating func record(page: TaskProgress, to last: UserID?, finished: Bool, at now: Instant) {
        cursor = last ?? cursor
        progress.add(page)
        if finished {
            state = .finished
            endedAt = now
        }
    }
}

/// What a task decided so far: its receivers, those pushed, and those not pushed by reason.
public struct TaskProgress: Hashable, Sendable {
    /// Receivers decided.
    public var targets = 0
    /// Receivers pushed (a delivery queued for each of their devices).
    public var pushed = 0
    /// Receivers not pushed, by the decision's reason (`no-device`, `online`, …).
    public var suppressed: [String: Int] = [:]

    public init(targets: Int = 0, pushed: Int = 0, suppressed: [String: Int] = [:]) {
        self.targets = targets
        self.pushed = pushed
        self.suppressed = suppressed
    }

    /// Adds another page's counts.
    public mutating func add(_ other: TaskProgress) {
        targets += other.targets
        pushed += other.pushed
        for (reason, count) in other.suppressed { suppressed[reason, default: 0] += count }
    }

    /// The suppressed counts as stored: a JSON object, reasons in code-point order.
    public var encodedSuppressed: String {
        JSONValue.object(JSONObject(suppressed.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, .int(Int64($0.value))) })).compactText
    }

    /// Reads ``encodedSuppressed``.
    public static func suppressed(from text: String) throws -> [String: Int] {
        var out: [String: Int] = [:]
        guard case .object(let object) = try JSONParser.parse(text) else {
            throw StoreError(.unexpectedValue, "a task's suppressed counts are not a JSON object", context: "push_tasks.suppressed")
        }
        for (reason, value) in object {
            guard case .int(let count) = value else {
                throw StoreError(.unexpectedValue, "a task's suppressed count is not a number", context: "push_tasks.suppressed")
            }
            out[reason] = Int(count)
        }
        return out
    }
}

/// Which tasks a key reads (``StateKeys/addTasks(_:)``).
public enum TaskQuery: Hashable, Sendable {
    /// The task with this id (none, or one).
    case task(Int64)
    /// Every pending task, by id.
    case pending
    /// The tasks created at or after an instant, by id.
    case createdSince(Instant)
    /// The most recent tasks, newest first.
    case recent(limit: Int)
}

/// The app's push tasks in one transaction.
package protocol TaskTable {
    /// Reads the tasks a query names.
    func tasks(_ query: TaskQuery) throws -> [PushTask]

    /// Stores a task (a new one, or one whose id is stored, replaced).
    func saveTask(_ task: PushTask) throws
}
