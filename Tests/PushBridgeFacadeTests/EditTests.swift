import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeStoreTestSupport
import Testing

/// Several changes decided from one read and committed together (``PushFacade/edit(_:_:)``), and a
/// request's messages sent together: all of it, or nothing, on every store.
@Suite("Edits")
struct EditTests {
    static let at = FacadeScenario.now

    @Test("an edit's changes — app, registrations, calls, a group's profile and members, a binding — are committed together", arguments: FacadeScenario.Backing.allCases)
    func severalChangesInOneEdit(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        let scope = EditScope(app: true, users: ["ann", "ben"], groups: ["team"], bindings: ["ann"], devices: [FacadeScenario.token])
        let existed = try await facade.edit(scope) { edit -> Bool in
            try edit.configure(FacadeScenario.app)
            #expect(try edit.register("ann", dialect: "agora-silent") && edit.register("ben", dialect: "agora-silent"))
            #expect(try edit.register("ann", dialect: "agora-silent") == false, "registered once, in the edit already")
            _ = try edit.apply([.init(FacadeScenario.json(#"{"call":"updatePushDisplayName","displayName":"Ann"}"#), at: Self.at, pointer: .root)], dialect: "agora-silent", user: "ann")
            let existed = try edit.groupExists("team")
            try edit.setGroupProfile(GroupProfile(owner: "ann", name: "Team", maxUsers: 10, createdAt: Self.at), of: "team")
            try edit.setMembers(["ann", "ben"], of: "team")
            #expect(try edit.groupExists("team") && edit.members(of: "team") == ["ann", "ben"], "the edit sees its own changes")
            try edit.bindPush(user: "ann", deviceID: "phone", token: FacadeScenario.token, notifier: "agoraTest", at: Self.at, dialect: "agora-silent")
            return existed
        }
        #expect(existed == false)
        await #expect(try facade.app() == FacadeScenario.app)
        #expect(try await facade.user("ann")?.state.displayName == "Ann")
        #expect(try await facade.user("ann")?.isConfigured == true)
        await #expect(try facade.user("ben")?.isConfigured == true)
        #expect(try await facade.members(of: "team") == ["ann", "ben"])
        #expect(try await facade.groupProfile(of: "team")?.name == "Team")
        await #expect(try facade.pushBindings(of: "ann") == [PushBinding(deviceID: "phone", notifier: "agoraTest", token: FacadeScenario.token)])
        await #expect(try facade.user("ann")?.state.devices.map(\.token) == [FacadeScenario.token])
    }

    @Test("an edit that throws, or asks for what it did not read, writes nothing", arguments: FacadeScenario.Backing.allCases)
    func aRefusedEditWritesNothing(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await facade.edit(EditScope(users: ["ann"], groups: ["team"])) { edit in
                try edit.register("ann", dialect: "agora-silent")
                try edit.setMembers(["ann"], of: "team")
                throw Refused()
            }
        }
        let notRead = try await #require(throws: StateEdit.NotRead.self) {
            try await facade.edit(EditScope(users: ["ann"])) { edit in
                try edit.register("ann", dialect: "agora-silent")
                _ = try edit.user("ben")
            }
        }
        #expect(notRead.description.contains("\"ben\""))
        #expect(try await facade.user("ann") == nil)
        #expect(try await facade.groupExists("team") == false)
        // A rejected call's pointer comes through, and the registration before it goes too.
        let rejected = try await #require(throws: InputError.self) {
            try await facade.edit(PushFacade.scope(of: [], user: "ann")) { edit in
                try edit.register("ann", dialect: "tencent-tim")
                _ = try edit.apply([.init(FacadeScenario.json(#"{"call":"nope"}"#), at: Self.at, pointer: .root / 3)], dialect: "tencent-tim", user: "ann")
            }
        }
        #expect(rejected.pointer.description.hasPrefix("/3"))
        await #expect(try facade.user("ann") == nil)
    }

    @Test("a token bound again leaves its earlier owner's bindings; removing a device finds its owner; a removed user leaves the groups read", arguments: FacadeScenario.Backing.allCases)
    func ownersAndRemovals(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        for user in ["ann", "ben"] { try await FacadeScenario.register(user, in: facade) }
        try await facade.setMembers(["ann", "ben"], of: "team")
        let token = FacadeScenario.token
        try await facade.bindPush(user: "ann", deviceID: "phone", token: token, notifier: "agoraTest", at: Self.at, dialect: "agora-silent")
        // The same token bound to ben: ann's binding of it goes (read with the device).
        try await facade.bindPush(user: "ben", deviceID: "phone-2", token: token.uppercased(), notifier: "agoraTest", at: Self.at, dialect: "agora-silent")
        await #expect(try facade.pushBindings(of: "ann").allSatisfy { $0.token != token })
        await #expect(try facade.pushBindings(of: "ben").contains(PushBinding(deviceID: "phone-2", notifier: "agoraTest", token: token)))
        // APNs feedback names no user: the device's owner is read with it.
        #expect(try await facade.removeDevice(token: token) == "ben")
        await #expect(try facade.user("ben")?.state.devices.contains { $0.token == token } == false)
        await #expect(throws: InputError.self) { try await facade.removeDevice(token: token) }
        // A user removed in an edit is gone from the group the edit read, and from the store.
        let members = try await facade.edit(EditScope(users: ["ann"], groups: ["team"])) { edit in
            try edit.removeUser("ann")
            #expect(try edit.user("ann") == nil)
            return try edit.members(of: "team")
        }
        #expect(members == ["ben"])
        #expect(try await facade.members(of: "team") == ["ben"])
        #expect(try await facade.user("ann") == nil)
        await #expect(throws: InputError.self) { try await facade.removeUser("ann") }
    }

    @Test("a request's messages go together: an unknown target refuses them all, or is skipped; group sequences move on once a message", arguments: FacadeScenario.Backing.allCases)
    func sendingTogether(_ backing: FacadeScenario.Backing) async throws {
        let facade = try await UpdateTests.scenario(backing)
        func batch(_ messages: [(JSONValue, StateKeys.Target)]) throws -> [PushFacade.PreparedMessage] {
            try messages.map { message, target in
                var prepared = try facade.prepare(message, dialect: "agora-silent", now: Self.at)
                prepared.requiredTargets = [target]
                return prepared
            }
        }
        let mixed = try batch([
            (FacadeScenario.groupMessage(from: "u1", to: "g1", id: "s-1"), .group("g1")),
            (FacadeTests.directMessage(from: "u1", to: "nobody", id: "s-2"), .user("nobody")),
            (FacadeScenario.groupMessage(from: "u2", to: "g1", id: "s-3"), .group("g1")),
        ])
        await #expect(throws: PushFacade.UnknownTargets(targets: ["nobody"])) {
            _ = try await facade.sendTogether(mixed, skippingUnknownTargets: false, sequencing: true)
        }
        #expect(try await facade.sentMessage("s-1", now: Self.at) == nil, "refused: nothing sent")
        #expect(try await facade.messageSequence(of: "g1", advancing: false) == 0, "refused: nothing sent")
        let sent = try await facade.sendTogether(mixed, skippingUnknownTargets: true, sequencing: true)
        #expect(sent.sent.map(\.index) == [0, 2] && sent.unknownTargets == ["nobody"])
        #expect(sent.sequences == [1, 2])
        // Sent again: repeats read the sequence without moving it.
        let again = try await facade.sendTogether([mixed[0]], skippingUnknownTargets: false, sequencing: true)
        #expect(again.sent.allSatisfy(\.outcome.isRepeat) && again.sequences == [2])
        await #expect(try facade.messageSequence(of: "g1", advancing: false) == 2)
    }
}
