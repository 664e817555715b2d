import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// Group profiles, message sequences, push bindings and targeted or large-group decisions on every
/// store (Specification §14): the same answers from the memory twin, SQLite and PostgreSQL.
@Suite("Group profiles and push bindings")
struct GroupProfileTests {
    @Test("a group's profile, its message sequence and a user's push bindings, kept and forgotten", arguments: FacadeScenario.Backing.allCases)
    func profilesSequencesAndBindings(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        #expect(try await facade.groupProfile(of: "g") == nil)
        #expect(try await !facade.groupExists("g"))
        var profile = GroupProfile(owner: "alice", name: "Team", maxUsers: 300, createdAt: Instant(milliseconds: 1_000), vendorFields: JSONObject([("public", .bool(true))]))
        profile.blocked = ["mallory"]
        profile.admins = ["bob"]
        try await facade.setGroupProfile(profile, of: "g")
        #expect(try await facade.groupProfile(of: "g") == profile)
        #expect(try await facade.groupExists("g"))
        #expect(try await facade.messageSequence(of: "g", advancing: false) == 0)
        #expect(try await facade.messageSequence(of: "g", advancing: true) == 1)
        #expect(try await facade.messageSequence(of: "g", advancing: true) == 2)
        #expect(try await facade.messageSequence(of: "g", advancing: false) == 2)
        #expect(try await facade.messageSequence(of: "other", advancing: true) == 1)
        try await facade.setGroupProfile(profile, of: "g")  // a profile change keeps the sequence
        #expect(try await facade.messageSequence(of: "g", advancing: false) == 2)
        try await facade.setMembers(["alice", "bob"], of: "g")
        try await facade.setMembers(["bob"], of: "a-members-only")
        #expect(try await facade.groups() == ["a-members-only", "g"], "a group with a sequence alone is no group")
        #expect(try await facade.groups(containing: "bob") == ["a-members-only", "g"])
        #expect(try await facade.groups(containing: "alice") == ["g"])
        #expect(try await facade.groups(containing: "nobody") == [])
        try await facade.setMembers([], of: "a-members-only")
        #expect(try await facade.deleteGroup("g"))
        #expect(try await facade.groups() == [])
        #expect(try await facade.groupProfile(of: "g") == nil)
        #expect(try await facade.members(of: "g") == [])
        #expect(try await facade.messageSequence(of: "g", advancing: false) == 0)
        #expect(try await !facade.deleteGroup("g"))

        let token = FacadeScenario.token(of: "carol")
        let name = try #require(FacadeScenario.app.certificates[0].name)
        try await facade.register("carol", dialect: "agora-silent")
        let bound = try await facade.bindPush(user: "carol", deviceID: "d1", token: token.uppercased(), notifier: name, at: Instant(milliseconds: 5), dialect: "agora-silent")
        #expect(bound == PushBinding(deviceID: "d1", notifier: name, token: token))
        #expect(try await facade.pushBindings(of: "carol") == [PushBinding(deviceID: "d1", notifier: name, token: token)])
        #expect(try await facade.user("carol")?.state.devices.map(\.token) == [token])
        await #expect(throws: InputError.self) {
            try await facade.bindPush(user: "carol", deviceID: "d2", token: token, notifier: "no-such-certificate", at: Instant(milliseconds: 6), dialect: "agora-silent")
        }
        #expect(try await facade.pushBindings(of: "carol").count == 1, "a refused binding changes nothing")
        #expect(try await facade.bindPush(user: "carol", deviceID: "d1", token: "", notifier: name, at: Instant(milliseconds: 7), dialect: "agora-silent") == nil)
        #expect(try await facade.pushBindings(of: "carol") == [])
        #expect(try await facade.user("carol")?.state.devices == [])
        // Two devices, then one unbound: the store rewrites the list (every position, not the first again).
        let second = String(token.reversed())
        try await facade.bindPush(user: "carol", deviceID: "d1", token: token, notifier: name, at: Instant(milliseconds: 8), dialect: "agora-silent")
        try await facade.bindPush(user: "carol", deviceID: "d2", token: second, notifier: name, at: Instant(milliseconds: 9), dialect: "agora-silent")
        #expect(try await facade.pushBindings(of: "carol").map(\.deviceID) == ["d1", "d2"])
        try await facade.bindPush(user: "carol", deviceID: "d1", token: "", notifier: name, at: Instant(milliseconds: 10), dialect: "agora-silent")
        #expect(try await facade.pushBindings(of: "carol") == [PushBinding(deviceID: "d2", notifier: name, token: second)])
        #expect(try await facade.user("carol")?.state.devices.map(\.token) == [second])
        try await facade.removeUser("carol")
        try await facade.register("carol", dialect: "agora-silent")
        #expect(try await facade.pushBindings(of: "carol") == [], "removing a user forgets its bindings")
    }

    @Test("a large group decides large-group for those it would push; a targeted message decides for its members only", arguments: FacadeScenario.Backing.allCases)
    func largeAndTargetedGroups(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        for user in ["bob", "carol"] {
            try await facade.updateUser(user, dialect: "tencent-tim") { state in
                state.devices = [Device(token: FacadeScenario.token(of: user), certificate: FacadeScenario.app.certificates[0])]
            }
        }
        try await facade.setMembers(["alice", "bob", "carol"], of: "g")
        func send(_ id: String, receiverList: [String]? = nil) async throws -> [ReceiverDecision] {
            var message: [(key: String, value: JSONValue)] = [
                ("id", .string(id)), ("conversation", ["type": "Group", "id": "g"]), ("sender", "alice"), ("elems", [["type": "Text", "text": "hi"]]),
            ]
            if let receiverList { message.append(("receiverList", .array(receiverList.map(JSONValue.string)))) }
            return try await facade.send(.object(JSONObject(message)), dialect: "tencent-tim", now: FacadeScenario.now)
        }
        let all = try await send("m1")
        #expect(all.map(\.receiver) == ["bob", "carol"] && all.allSatisfy { $0.decision.request != nil })
        let targeted = try await send("m2", receiverList: ["carol", "nobody"])
        #expect(targeted.map(\.receiver) == ["carol"] && targeted[0].decision.request?.badgeCounter == 1, "not counted: \(targeted)")
        #expect(try await facade.sentMessage("m2", now: FacadeScenario.now)?.map(\.receiver) == ["carol"])
        try await facade.setGroupProfile(GroupProfile(owner: "alice", name: "big", maxUsers: 5000, offlinePush: false, createdAt: FacadeScenario.now), of: "g")
        let large = try await send("m3")
        #expect(large.map { $0.decision.reason } == [.largeGroup, .largeGroup], "\(large)")
        #expect(try await facade.user("bob")?.state.badge == 1, "a large group's message counts nothing")
    }
}
