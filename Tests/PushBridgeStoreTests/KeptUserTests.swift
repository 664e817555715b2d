import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// SQLite connections keep the users one-to-one messages read (as receivers and as senders)
/// between transactions. Whatever changes them, what they answer must equal what a store that keeps
/// nothing reads, and every one-to-one decision must equal a full decide of the receiver's state.
@Suite("Kept one-to-one users")
struct KeptUserTests {
    /// Receivers asked for at once: configured, unconfigured (`x1`), unknown (`nobody`), one twice.
    static let listed: [UserID] = ["m3", "m0", "nobody", "m3", "m12", "x1", "m11", "m15", "m16", "m17", "m22", "m14", "m5"]

    /// What a transaction answers for one-to-one messages from `sender`.
    struct Answers: Equatable {
        var receivers: [ReceiverCacheTests.Row]
        var senders: [UserState?]
    }

    static func answers(_ transaction: any PushStateTransaction, sender: UserID) throws -> Answers {
        Answers(
            receivers: ReceiverCacheTests.rows(try transaction.receivers(of: .users(listed), excluding: sender, conversation: ConversationKey(.oneToOne, sender))),
            senders: try [sender, "m11", "x1", "nobody"].flatMap { [try transaction.sender($0, group: nil), try transaction.sender($0, group: ReceiverCacheTests.group)] })
    }

    /// A one-to-one message.
    static func message(from sender: UserID, to receiver: UserID, id: String) -> JSONValue {
        FacadeScenario.json(#"{"id":"\#(id)","conversationId":"\#(receiver)","from":"\#(sender)","to":"\#(receiver)","chatType":"Chat","body":{"type":"text","text":"lunch?"}}"#)
    }

    /// Sends a one-to-one message through the facade and checks its decision against a full decide
    /// of the receiver's whole state from a store that keeps nothing, read before the send.
    static func sendMatchesFullDecide(_ facade: PushFacade, path: String, id: String, from sender: UserID, to receiver: UserID) async throws {
        let prepared = try facade.prepare(message(from: sender, to: receiver, id: id), dialect: "agora-silent", now: FacadeScenario.now)
        let reference = try SQLiteStateStore(path: path, options: .init(keptReceivers: 0)).read { transaction -> PushDecision in
            let record = try transaction.user(receiver) ?? UserRecord.placeholder(receiver)
            let state = record.isConfigured ? record.state : try facade.adapter("agora-silent").newUser(receiver, timeZone: record.state.timeZone)
            return PushDecider(app: try transaction.app()).decide(
                prepared.message, sender: try transaction.user(sender)?.state, receiver: state, profile: prepared.profile, now: prepared.now)
        }
        let sent = try await facade.send(prepared).decisions
        #expect(sent.map(\.receiver) == [receiver])
        #expect(sent.first?.decision == reference, "\(sender) to \(receiver), \(id)")
        #expect(try await facade.sentMessage(id, now: FacadeScenario.now) == sent, "the repeat record of \(id)")
    }

    @Test("kept users equal what a store keeping nothing reads, and decisions a full decide, after every kind of change")
    func keptUsersStayTrue() async throws {
        let (path, store, facade) = try await ReceiverCacheTests.populated(members: 30)
        let reader = try SQLiteStateStore(path: path)  // open all along: its reader connection keeps users too
        var round = 0
        func check(_ what: String, sender: UserID = "m0") async throws {
            let fresh = try SQLiteStateStore(path: path, options: .init(keptReceivers: 0)).read { try Self.answers($0, sender: sender) }
            #expect(try store.write { try Self.answers($0, sender: sender) } == fresh, "the writer after \(what)")
            #expect(try reader.read { try Self.answers($0, sender: sender) } == fresh, "a reader after \(what)")
            for receiver in ["m3", "x1", "nobody", "m11", "m17"] {
                round += 1
                try await Self.sendMatchesFullDecide(facade, path: path, id: "o\(round)", from: sender, to: receiver)
            }
            #expect(try store.write { try Self.answers($0, sender: sender) }
                == (try SQLiteStateStore(path: path, options: .init(keptReceivers: 0)).read { try Self.answers($0, sender: sender) }),
                "the writer after \(what) and sends")
        }
        try await check("the first load")
        try await check("warm sends")
        try await check("another sender", sender: "m5")
        // A group send counts kept users among many others (their kept counters are set in place).
        _ = try await ReceiverCacheTests.sendMatchesFullDecide(facade, path: path, id: "kept-g1", sender: "m4")
        try await check("a group send counting kept users")

        // The facade's own writes.
        try await facade.apply(FacadeScenario.json(#"{"call":"setSilentModeForConversation","conversationId":"m0","conversationType":"Chat","remindType":"None"}"#),
            dialect: "agora-silent", user: "m3", at: FacadeScenario.now)
        try await check("a one-to-one conversation setting")
        try await facade.apply(FacadeScenario.json(#"{"call":"updatePushDisplayName","displayName":"Zero"}"#), dialect: "agora-silent", user: "m0", at: FacadeScenario.now)
        try await facade.updateUser("m11", dialect: "agora-silent") { $0.nameCards[ReceiverCacheTests.group] = "Eleven in g1" }
        try await check("a display name and a name card")
        try await facade.setPresence(.online, of: "m17", dialect: "agora-silent")
        try await check("a presence change")
        try store.foldBadgeLog()
        try await facade.updateUser("m22", dialect: "agora-silent") { $0.badge = 7 }
        try await check("a fold, then a counter set")
        try await facade.updateUser("m11", dialect: "agora-silent") {
            $0.devices.insert(Device(token: FacadeScenario.token(of: "m12"), certificate: ReceiverCacheTests.certificate), at: 0)
        }
        try await check("a device moving from one user to another")
        try await facade.register("x1", dialect: "agora-silent")
        try await check("an unconfigured user registering")
        try await facade.removeUser("m14")
        try await check("a user forgotten")
        try await facade.removeDevice(token: FacadeScenario.token(of: "m15"))
        try await check("a device removed")

        // Another connection's commit (another process: the `pushbridge` tool beside a service).
        let other = PushFacade(store: try SQLiteStateStore(path: path))
        try await other.updateUser("m16", dialect: "agora-silent") { $0.badge = 40; $0.language = "fr"; $0.displayName = "Sixteen" }
        try await check("another connection's commit")
        _ = try await other.send(Self.message(from: "m1", to: "m3", id: "other"), dialect: "agora-silent", now: FacadeScenario.now)
        try await check("another connection's send")

        // A rolled-back write.
        struct Refused: Error {}
        let m3 = try #require(try store.write { try $0.receivers(of: .users(["m3"]), excluding: "m0", conversation: ConversationKey(.oneToOne, "m0")).first?.key })
        #expect(throws: Refused.self) {
            try store.write { transaction in
                _ = try Self.answers(transaction, sender: "m0")
                var state = try #require(try transaction.user("m17")).state
                state.presence = .offline
                state.displayName = "rolled back"
                try transaction.save(state, replacing: nil)
                try transaction.setBadges([(m3, 99)])
                throw Refused()
            }
        }
        try await check("a rolled-back write")
    }

    @Test("past the limit, kept users are dropped and decisions stay the same")
    func overTheLimit() async throws {
        let (path, _, _) = try await ReceiverCacheTests.populated()
        let store = try SQLiteStateStore(path: path, options: .init(keptReceivers: 8))  // two users at most
        let facade = PushFacade(store: store)
        for (i, receiver) in ["m3", "m4", "m5", "m3", "m6", "m3"].enumerated() {
            try await Self.sendMatchesFullDecide(facade, path: path, id: "l\(i)", from: "m\(i % 2)", to: receiver)
        }
        #expect(try store.write { try Self.answers($0, sender: "m1") }
            == (try SQLiteStateStore(path: path, options: .init(keptReceivers: 0)).read { try Self.answers($0, sender: "m1") }))
    }
}
