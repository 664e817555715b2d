import PushBridgeCore
import PushBridgeJSON

/// Runs scenarios: applies the setup calls through the dialect adapter, reads the message,
/// decides and renders. The single code path behind `pushbridge decide`, `pushbridge conform`
/// and the test suite.
public struct ScenarioEngine: Sendable {
    public let registry: DialectRegistry

    public init(registry: DialectRegistry = .standard) { self.registry = registry }

    /// A scenario after its setup: the world, the canonical message, and who is who.
    public struct Prepared: Sendable {
        public var adapter: any DialectAdapter
        public var world: PushWorld
        public var message: PushMessage
        public var sender: UserID
        public var receiver: UserID
        public var now: Instant
        /// The profile the scenario asks for (its own, else its dialect's).
        public var profile: Profile

        public var senderState: UserState? { world.users[sender] }
        public var receiverState: UserState { world.users[receiver]! }
    }

    /// Applies the setup and reads the message.
    public func prepare(_ scenario: Scenario) throws -> Prepared {
        let adapter = try registry.adapter(scenario.dialect, at: JSONPointer.root / "dialect")
        let profile = try scenario.profile.map { try registry.profile($0, at: JSONPointer.root / "profile") } ?? adapter.profile
        var world = PushWorld(app: scenario.app)
        world.users[scenario.sender.user] = adapter.newUser(scenario.sender.user, timeZone: scenario.timeZone)
        var receiver = adapter.newUser(scenario.receiver.user, timeZone: scenario.timeZone)
        receiver.presence = scenario.presence
        receiver.badge = scenario.badge
        world.users[scenario.receiver.user] = receiver

        for party in [scenario.sender, scenario.receiver] {
            for (call, at, pointer) in party.calls {
                try apply(call, at: pointer, adapter: adapter, to: &world, context: CallContext(caller: party.user, at: at))
            }
        }
        let message = try adapter.message(
            scenario.message, at: JSONPointer.root / "message",
            context: MessageContext(sender: scenario.sender.user, receiver: scenario.receiver.user, now: scenario.now))
        return Prepared(
            adapter: adapter, world: world, message: message, sender: scenario.sender.user, receiver: scenario.receiver.user,
            now: scenario.now, profile: profile)
    }

    /// Applies one call atomically: on error `world` is unchanged.
    public func apply(_ call: JSONValue, at pointer: JSONPointer, adapter: any DialectAdapter, to world: inout PushWorld, context: CallContext) throws {
        let name = try adapter.callName(of: call, at: pointer)
        if adapter.queryCalls.contains(name) {
            _ = try adapter.query(call, at: pointer, in: world, context: context)
            return
        }
        var copy = world
        try adapter.apply(call, at: pointer, to: &copy, context: context)
        world = copy
    }

    /// Decides a prepared scenario with a profile.
    public func decide(_ prepared: Prepared, profile: Profile? = nil) -> PushDecision {
        var push = PreparedPush(
            prepared.message, sender: prepared.senderState, profile: profile ?? prepared.profile, decider: PushDecider(app: prepared.world.app),
            receivers: 1)
        return push.decide(for: prepared.receiverState, now: prepared.now)
    }

    /// Reads, prepares and decides a scenario.
    public func decide(_ scenario: Scenario, profile: Profile? = nil) throws -> PushDecision {
        decide(try prepare(scenario), profile: profile)
    }

    /// Runs one query after setup: `{"call": name, …params, "user"?: id, "dialect"?: id}` (`result` is ignored).
    ///
    /// `dialect` names another dialect whose query answers from the same canonical state: this is
    /// how settings written in one dialect are read back in another.
    public func query(_ query: JSONValue, at pointer: JSONPointer, in prepared: Prepared) throws -> JSONValue {
        let request = try Self.queryRequest(query, at: pointer)
        let adapter = try request.dialect.map { try registry.adapter($0, at: pointer / "dialect") } ?? prepared.adapter
        _ = try adapter.queryName(of: request.call, at: pointer)
        return try adapter.query(request.call, at: pointer, in: prepared.world, context: CallContext(caller: request.user ?? prepared.receiver, at: prepared.now))
    }

    /// Splits a fixture's query object into the call itself and whose state, in which dialect, it reads.
    /// - Parameters:
    ///   - query: `{"call": name, …params, "user"?: id, "dialect"?: id, "result"?: …}`.
    ///   - pointer: where it is in its document.
    /// - Returns: the call without `user`, `dialect` and `result`; the user and dialect when given.
    public static func queryRequest(_ query: JSONValue, at pointer: JSONPointer) throws -> (call: JSONValue, user: UserID?, dialect: String?) {
        let reader = try FieldReader(query, at: pointer, what: "a query object")
        var call = reader.object
        let user = try reader.optionalString("user", expected: "the user whose state is queried")
        let dialect = try reader.optionalString("dialect", expected: "the dialect whose query call this is")
        for key in ["result", "user", "dialect"] { call[key] = nil }
        return (.object(call), user, dialect)
    }
}

extension ScenarioEngine.Prepared {
    /// The sender's fields that take part in a push (Specification §2: "per sender — display name / nickname,
    /// group name cards"); the sender's own receiving settings do not.
    public static let senderFields: Set<CanonicalField> = [.displayName, .nameCards]

    /// How the receiver's canonical state, and the sender's display name and name cards, differ
    /// from another prepared scenario's (same parties), evaluated at this scenario's `now`.
    public func stateDifferences(from other: ScenarioEngine.Prepared) -> [(party: String, difference: CanonicalDifference)] {
        var out: [(String, CanonicalDifference)] = []
        if let mine = senderState, let theirs = other.senderState {
            out += mine.canonicalDifferences(from: theirs, at: now).filter { Self.senderFields.contains($0.field) }.map { ("sender", $0) }
        }
        out += receiverState.canonicalDifferences(from: other.receiverState, at: now).map { ("receiver", $0) }
        return out
    }
}
