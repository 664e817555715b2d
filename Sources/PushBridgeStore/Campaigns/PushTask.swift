import PushBridgeCore
import PushBridgeJSON

/// Whom a push task pushes to: the users in every label of ``all`` and, when ``any`` names labels, in
/// at least one of those; every user of the app when it names none.
public struct TaskAudience: Hashable, Sendable {
    /// Label keys a receiver is in, each one (Easemob / Agora Chat's `targets`, Tencent's `TagsAnd`).
    public var all: [String]
    /// Label keys a receiver is in one of at least (Tencent's `TagsOr`); empty: no such condition.
    public var any: [String]

    /// - Parameters:
    ///   - all: labels a receiver is in, each one.
    ///   - any: labels a receiver is in one of (empty: no condition).
    public init(all: [String] = [], any: [String] = []) {
        self.all = all
        self.any = any
    }

    /// Every user of the app.
    public static let everyUser = TaskAudience()

    /// Whether it names no label: every user of the app.
    public var isEveryUser: Bool { all.isEmpty && any.isEmpty }

    /// Every label it names, `all`'s first.
    public var labels: [String] { all + any.filter { !all.contains($0) } }

    /// The audience as stored: `{"all":[…],"any":[…]}`.
    public var encoded: String {
        JSONValue.object(JSONObject([("all", .array(all.map(JSONValue.string))), ("any", .array(any.map(JSONValue.string)))])).compactText
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
        guard case .object(let object) = try JSONParser.parse(text) else {
            throw StoreError(.unexpectedValue, "a task's audience is not a JSON object", context: "push_tasks.audience")
        }
        return TaskAudience(all: try keys(object["all"]), any: try keys(object["any"]))
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
    public static func messagePrefix(of id: Int64) -> String { "pushtask-\(id)-" }
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
