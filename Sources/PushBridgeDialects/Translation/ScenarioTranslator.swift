import PushBridgeCore
import PushBridgeJSON

/// Rewrites a scenario in another dialect (Specification §7, `pushbridge translate`).
///
/// Translation goes through canonical state: the source scenario's setup is applied, then the
/// target dialect writes the calls that reach the same state and the message in its own shape.
/// Whatever the target cannot express is listed as a loss. The translated scenario keeps the
/// source's profile, so an old app build still gets the payload it parses; when nothing is lost
/// it decides exactly as the source does, and it keeps the source's `expect` (its queries are
/// answered by the source dialect's query calls).
public struct ScenarioTranslator: Sendable {
    public let engine: ScenarioEngine

    public init(engine: ScenarioEngine = ScenarioEngine()) { self.engine = engine }

    /// A translated scenario and what it lost.
    public struct Translation: Sendable {
        /// The scenario document in the target dialect (with `translatedFrom` and `losses`).
        public var document: JSONValue
        public var losses: [TranslationLoss]
        public var isLossless: Bool { losses.isEmpty }
    }

    /// The appkey written when the source scenario has none (it is not canonical state).
    public static let placeholderAppkey = "pushbridge#translated"

    /// Translates a scenario.
    /// - Parameters:
    ///   - scenario: the source scenario.
    ///   - dialect: the target dialect id.
    /// - Throws: `InputError` for an unknown dialect or a bad source scenario.
    public func translate(_ scenario: Scenario, to dialect: String) throws -> Translation {
        let target = try engine.registry.adapter(dialect, at: .root)
        let prepared = try engine.prepare(scenario)
        let source = prepared.adapter
        let receiverState = prepared.receiverState
        var output = TranslationOutput(app: prepared.world.app, now: scenario.now, receiver: scenario.receiver.user, appkey: Self.appkey(in: scenario))

        let others = prepared.world.users.keys.filter { $0 != scenario.sender.user && $0 != scenario.receiver.user }.sorted()
        for user in [scenario.sender.user, scenario.receiver.user] {
            guard var state = prepared.world.users[user] else { continue }
            state.timeZone = scenario.timeZone
            target.writeSetup(of: state, into: &output)
        }
        for user in others {
            for group in prepared.world.users[user]?.nameCards.keys.sorted() ?? [] {
                output.lose(.nameCards, user: user, key: group, "only the sender's and the receiver's settings are translated")
            }
        }
        let message = target.writeMessage(prepared.message, into: &output)
        if let sender = prepared.senderState {
            let fresh = source.newUser(sender.user, timeZone: scenario.timeZone)
            if sender.isOnline(at: scenario.now) != fresh.isOnline(at: scenario.now) || sender.badge != fresh.badge {
                output.lose(.presence, user: sender.user, "the sender's presence and badge are not part of a scenario")
            }
        }

        let original = scenario.document
        var doc = JSONObject()
        doc["name"] = original["name"]
        if let v = original["description"] { doc["description"] = v }
        if let v = original["seeds"] { doc["seeds"] = v }
        doc["translatedFrom"] = .string(source.id)
        doc["dialect"] = .string(target.id)
        doc["now"] = original["now"]
        if let v = original["app"] { doc["app"] = v }
        doc["sender"] = .object(JSONObject([("user", .string(scenario.sender.user)), ("calls", .array(output.calls[scenario.sender.user] ?? []))]))
        var receiver = JSONObject([("user", .string(scenario.receiver.user))])
        if let zone = original["receiver"]?["timezone"] { receiver["timezone"] = zone }
        switch Self.presence(of: receiverState, source: source, target: target, now: scenario.now) {
        case .online: receiver["presence"] = "online"
        case .offline: receiver["presence"] = "offline"
        case .background(let since):
            receiver["presence"] = "background"
            receiver["backgroundSince"] = .string(since.description)
        }
        if receiverState.badge != 0 { receiver["badge"] = .int(Int64(receiverState.badge)) }
        receiver["calls"] = .array(output.calls[scenario.receiver.user] ?? [])
        doc["receiver"] = .object(receiver)
        doc["message"] = message
        doc["profile"] = .string(scenario.profile ?? source.id)
        doc["losses"] = .array(output.losses.map(\.json))
        if output.losses.isEmpty, let expect = scenario.expect?.objectValue {
            doc["expect"] = .object(Self.expectation(expect, answeredBy: source.id))
        }
        return Translation(document: .object(doc), losses: output.losses)
    }

    /// The source's first `initializeSDK` appkey, else the placeholder.
    static func appkey(in scenario: Scenario) -> String {
        for (call, _, _) in scenario.sender.calls + scenario.receiver.calls {
            if call["call"] == "initializeSDK", let key = call["appkey"]?.stringValue, !key.isEmpty { return key }
        }
        return placeholderAppkey
    }

    /// The receiver's presence as the target writes it: as it is when both dialects have the
    /// same background grace, else what it amounts to at `now` (online or offline).
    static func presence(of state: UserState, source: any DialectAdapter, target: any DialectAdapter, now: Instant) -> Presence {
        guard case .background = state.presence else { return state.presence }
        let targetGrace = target.newUser(state.user, timeZone: state.timeZone).backgroundGraceSeconds
        if targetGrace == state.backgroundGraceSeconds { return state.presence }
        return state.isOnline(at: now) ? .online : .offline
    }

    /// The expectation with each query marked as the source dialect's (unless it names one).
    static func expectation(_ expect: JSONObject, answeredBy dialect: String) -> JSONObject {
        var out = expect
        if let queries = expect["queries"]?.arrayValue {
            out["queries"] = .array(
                queries.map { query in
                    guard var o = query.objectValue, o["dialect"] == nil else { return query }
                    var marked = JSONObject([("call", o["call"] ?? .null), ("dialect", .string(dialect))])
                    o["call"] = nil
                    for (k, v) in o { marked[k] = v }
                    return .object(marked)
                })
        }
        return out
    }
}
