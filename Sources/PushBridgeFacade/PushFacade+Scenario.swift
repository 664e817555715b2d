import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore

extension PushFacade {
    /// Runs a scenario through the store: the app, both parties (time zone, presence, badge),
    /// their calls in order, group membership {sender, receiver} for a group message, then the
    /// message. The decision must equal `ScenarioEngine`'s for every fixture.
    /// - Parameters:
    ///   - scenario: the scenario (into an empty store).
    ///   - profile: the profile to render with (the scenario's own when `nil`).
    /// - Returns: the receiver's decision.
    public func replay(_ scenario: Scenario, profile: Profile? = nil) async throws -> PushDecision {
        let adapter = try adapter(scenario.dialect, at: JSONPointer.root / "dialect")
        let profile = try profile ?? scenario.profile.map { try registry.profile($0, at: JSONPointer.root / "profile") } ?? adapter.profile
        try await configure(scenario.app)
        try await updateUser(scenario.sender.user, dialect: scenario.dialect) { $0.timeZone = scenario.timeZone }
        try await updateUser(scenario.receiver.user, dialect: scenario.dialect) {
            $0.timeZone = scenario.timeZone
            $0.presence = scenario.presence
            $0.badge = scenario.badge
        }
        for party in [scenario.sender, scenario.receiver] {
            _ = try await apply(party.calls.map { DialectCall($0.call, at: $0.at, pointer: $0.pointer) }, dialect: scenario.dialect, user: party.user)
        }
        let address = try adapter.address(of: scenario.message, at: JSONPointer.root / "message")
        if case .group(let group) = address.audience {
            try await setMembers([scenario.sender.user, scenario.receiver.user], of: group)
        }
        let decisions = try await send(
            scenario.message, dialect: scenario.dialect, now: scenario.now, profile: profile, sender: scenario.sender.user,
            pointer: JSONPointer.root / "message")
        guard let mine = decisions.first(where: { $0.receiver == scenario.receiver.user }) else {
            throw InputError(.invalidValue, at: JSONPointer.root / "message", expected: "a message that reaches the receiver \"\(scenario.receiver.user)\"",
                found: "receivers " + decisions.map(\.receiver).joined(separator: ", "))
        }
        return mine.decision
    }
}
