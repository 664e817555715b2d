import Foundation
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// Specification §10 over time, on both stores: several devices, tokens that move, the badge counter
/// across presence changes, repeated sends, and a database written by the previous schema.
@Suite("State over time")
struct StateOverTimeTests {
    typealias Backing = FacadeScenario.Backing
    static let now = FacadeScenario.now
    static let app = AppConfiguration(certificates: [
        Certificate(name: "phone", busiId: nil, bundleId: "io.agora.chatdemo", environment: .development),
        Certificate(name: "pad", busiId: nil, bundleId: "io.agora.chatdemo.pad", environment: .production),
    ])
    static let phone = String(repeating: "a1", count: 32)
    static let pad = String(repeating: "b2", count: 32)

    static func json(_ text: String) -> JSONValue { FacadeScenario.json(text) }

    static func bind(_ token: String, certificate: String, user: UserID, in facade: PushFacade, at: Instant = now) async throws {
        _ = try await facade.apply(
            [
                .init(json(#"{"call":"initializeSDK","appkey":"41117440#383391","apnsCertName":"\#(certificate)"}"#), at: at, pointer: .root / 0),
                .init(json(#"{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(token)"}"#), at: at, pointer: .root / 1),
            ], dialect: "agora-silent", user: user)
    }

    static func message(_ id: String, from sender: UserID = "u1", to receiver: UserID = "u2") -> JSONValue {
        json(#"{"id":"\#(id)","conversationId":"\#(receiver)","from":"\#(sender)","to":"\#(receiver)","chatType":"Chat","body":{"type":"text","text":"hi"}}"#)
    }

    static func facade(_ backing: Backing) async throws -> PushFacade {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(app)
        return facade
    }

    /// The badge a push shows, read from its payload bytes.
    static func badge(_ decision: PushDecision) -> Int64? {
        guard let request = decision.request else { return nil }
        return (try? JSONParser.parse(request.payload))?["aps"]?["badge"]?.intValue
    }

    @Test("two devices on two certificates get one delivery each, newest first", arguments: Backing.allCases)
    func twoDevices(_ backing: Backing) async throws {
        let facade = try await Self.facade(backing)
        try await Self.bind(Self.phone, certificate: "phone", user: "u2", in: facade)
        try await Self.bind(Self.pad.uppercased(), certificate: "pad", user: "u2", in: facade, at: Self.now.adding(seconds: 5))
        let decision = try #require(try await facade.send(Self.message("m1"), dialect: "agora-silent", now: Self.now.adding(seconds: 60)).first)
        let request = try #require(decision.decision.request)
        #expect(request.deliveries.map(\.device.token) == [Self.pad, Self.phone])
        #expect(request.deliveries.map { $0.headers.last?.value } == ["io.agora.chatdemo.pad", "io.agora.chatdemo"])
        #expect(request.deliveries.map(\.device.certificate.environment) == [.production, .development])
        #expect(request.deliveries[0].device.boundAt == Self.now.adding(seconds: 5))
        #expect(decision.decision.jsonText.contains(#""deliveries":[{"device":{"token":"\#(Self.pad)","environment":"production"},"headers":"#))

        // The same token again refreshes it: still two devices, the phone now newest.
        try await Self.bind(Self.phone, certificate: "pad", user: "u2", in: facade, at: Self.now.adding(seconds: 90))
        let devices = try #require(try await facade.user("u2")).state.devices
        #expect(devices.map(\.token) == [Self.phone, Self.pad])
        #expect(devices[0].certificate.name == "pad")
    }

    @Test("a token bound by another user moves to that user", arguments: Backing.allCases)
    func tokenMoves(_ backing: Backing) async throws {
        let facade = try await Self.facade(backing)
        try await Self.bind(Self.phone, certificate: "phone", user: "u2", in: facade)
        try await Self.bind(Self.pad, certificate: "phone", user: "u2", in: facade)
        try await Self.bind(Self.phone, certificate: "phone", user: "u3", in: facade)
        #expect(try await facade.user("u2")?.state.devices.map(\.token) == [Self.pad])
        #expect(try await facade.user("u3")?.state.devices.map(\.token) == [Self.phone])
        #expect(try await facade.store.owner(ofDevice: Self.phone) == "u3")

        let toU2 = try #require(try await facade.send(Self.message("m1"), dialect: "agora-silent", now: Self.now).first)
        #expect(toU2.decision.request?.deliveries.map(\.device.token) == [Self.pad])

        // Removing u2's last device: no-device; removing an unknown token is bad input and changes nothing.
        #expect(try await facade.removeDevice(token: Self.pad.uppercased()) == "u2")
        let after = try #require(try await facade.send(Self.message("m2"), dialect: "agora-silent", now: Self.now).first)
        #expect(after.decision == .suppressed(.noDevice))
        await #expect(throws: InputError.self) { try await facade.removeDevice(token: Self.pad) }
        #expect(try await facade.user("u3")?.state.devices.map(\.token) == [Self.phone])
    }

    @Test("badge counter: online resets, only pushes count, ignoreBadge never counts", arguments: Backing.allCases)
    func badgeOverTime(_ backing: Backing) async throws {
        let facade = try await Self.facade(backing)
        try await Self.bind(Self.phone, certificate: "phone", user: "u2", in: facade)
        var sent = 0
        func send() async throws -> PushDecision {
            sent += 1
            return try #require(try await facade.send(Self.message("m\(sent)"), dialect: "agora-silent", now: Self.now).first).decision
        }
        try await facade.setPresence(.online, of: "u2", dialect: "agora-silent")
        await #expect(try send() == .suppressed(.online))
        #expect(try await facade.user("u2")?.state.badge == 0, "a message that is not pushed does not count")
        try await facade.setPresence(.offline, of: "u2", dialect: "agora-silent")
        await #expect(Self.badge(try send()) == 1)
        await #expect(Self.badge(try send()) == 2)
        try await facade.setPresence(.online, of: "u2", dialect: "agora-silent")
        #expect(try await facade.user("u2")?.state.badge == 0, "becoming online resets the counter")
        try await facade.setPresence(.offline, of: "u2", dialect: "agora-silent")
        await #expect(Self.badge(try send()) == 1)
        // Still offline: going offline again does not reset.
        try await facade.setPresence(.offline, of: "u2", dialect: "agora-silent")
        await #expect(Self.badge(try send()) == 2)
        // Going to the background keeps the counter; online → background does not reset twice.
        try await facade.setPresence(.background(since: Self.now.adding(seconds: -600)), of: "u2", dialect: "agora-silent")
        await #expect(Self.badge(try send()) == 3)
        #expect(try await facade.user("u2")?.state.badge == 3)

        // A presence change for a user the store does not know is bad input and creates nobody.
        await #expect(throws: InputError.self) { try await facade.setPresence(.online, of: "stranger", dialect: "agora-silent") }
        #expect(try await facade.user("stranger") == nil)
    }

    @Test("tencent: doForeground resets, doBackground sets the base, ignoreBadge does not count", arguments: Backing.allCases)
    func tencentBadgeOverTime(_ backing: Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(AppConfiguration(certificates: [Certificate(name: nil, busiId: "2383", bundleId: "com.tencent.timdemo", environment: .development)]))
        func call(_ text: String) async throws { _ = try await facade.apply(Self.json(text), dialect: "tencent-tim", user: "bob", at: Self.now) }
        var sent = 0
        func send(ignoreBadge: Bool = false) async throws -> PushDecision {
            sent += 1
            let info = ignoreBadge ? #","offlinePushInfo":{"iosConfig":{"ignoreBadge":true}}"# : ""
            let message = Self.json(#"{"id":"t\#(sent)","conversation":{"type":"C2C","id":"bob"},"sender":"alice","elems":[{"type":"Text","text":"hi"}]\#(info)}"#)
            return try #require(try await facade.send(message, dialect: "tencent-tim", now: Self.now).first).decision
        }
        try await call(#"{"call":"setToken","busiId":2383,"token":"\#(Self.phone)"}"#)
        try await call(#"{"call":"doBackground","c2cUnread":3}"#)
        await #expect(Self.badge(try send()) == 4)
        await #expect(Self.badge(try send(ignoreBadge: true)) == nil)
        #expect(try await facade.user("bob")?.state.badge == 4, "ignoreBadge does not count")
        try await call(#"{"call":"doForeground"}"#)
        #expect(try await facade.user("bob")?.state.badge == 0, "doForeground resets the counter")
        await #expect(try send() == .suppressed(.online))
        try await call(#"{"call":"doBackground","c2cUnread":1,"groupUnread":1}"#)
        await #expect(Self.badge(try send()) == 3)
    }

    @Test("a repeated message id returns the stored decisions byte for byte and counts nothing", arguments: Backing.allCases)
    func repeatedSend(_ backing: Backing) async throws {
        let facade = try await Self.facade(backing)
        try await Self.bind(Self.phone, certificate: "phone", user: "u2", in: facade)
        try await Self.bind(Self.pad, certificate: "pad", user: "u2", in: facade)
        let first = try await facade.send(Self.message("m1"), dialect: "agora-silent", now: Self.now)
        #expect(Self.badge(first[0].decision) == 1)

        // A new device and a new presence do not change what the repeat answers.
        try await Self.bind(String(repeating: "c3", count: 32), certificate: "phone", user: "u2", in: facade)
        let again = try await facade.send(Self.message("m1"), dialect: "agora-silent", now: Self.now.adding(seconds: 30))
        #expect(again == first)
        #expect(again.map(\.json) == first.map(\.json))
        #expect(try await facade.user("u2")?.state.badge == 1, "a repeat changes no counter")

        let next = try await facade.send(Self.message("m2"), dialect: "agora-silent", now: Self.now.adding(seconds: 60))
        #expect(Self.badge(next[0].decision) == 2)
        #expect(next[0].decision.request?.deliveries.count == 3)

        // Kept 24 hours: within them still a repeat; after them the id is forgotten and counts again.
        let dayLater = try await facade.send(Self.message("m1"), dialect: "agora-silent", now: Self.now.adding(seconds: 86_399))
        #expect(dayLater == first)
        // Past the window an id counts again, whether or not a later send pruned it already.
        let late = try await facade.sendMessage(Self.message("m2"), dialect: "agora-silent", now: Self.now.adding(seconds: 60 + 86_401))
        #expect(!late.isRepeat)
        #expect(Self.badge(late.decisions[0].decision) == 3)
        let forgotten = try await facade.sendMessage(Self.message("m1"), dialect: "agora-silent", now: Self.now.adding(seconds: 60 + 86_402))
        #expect(!forgotten.isRepeat)
        #expect(Self.badge(forgotten.decisions[0].decision) == 4)
    }

    /// A record written by PushBridge 0.9 (`PBR1`: fixed-width integers, payloads and headers in
    /// full) is still a repeat's answer, built here byte by byte from that format's description.
    @Test func aRecordFromVersion09IsStillRead() async throws {
        var bytes = Array("PBR1".utf8)
        func integer(_ value: Int64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        func string(_ text: String) {
            withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian) { bytes += $0 }
            bytes += Array(text.utf8)
        }
        let payload = #"{"aps":{"alert":{"body":"hi"},"badge":3}}"#
        integer(2)
        string("u2")
        bytes.append(1)
        string(payload)
        integer(3)
        integer(1)
        string(Self.phone)
        string("io.agora.chatdemo")
        string("development")
        bytes += [1]
        string("phone")
        bytes += [0]
        integer(1_772_442_900_000)
        integer(3)
        for (name, value) in [("apns-push-type", "alert"), ("apns-priority", "10"), ("apns-topic", "io.agora.chatdemo")] {
            string(name)
            string(value)
        }
        string("u3")
        bytes.append(0)
        string("no-device")

        let path = temporaryDatabase()
        let facade = PushFacade(store: try SQLiteStateStore(path: path))
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        try sqlite(path, "INSERT INTO sent_messages (message_id, sent_at, decisions) VALUES ('old', \(Self.now.milliseconds), X'\(hex)')")
        let device = Device(token: Self.phone, certificate: Self.app.certificates[0], boundAt: Instant(milliseconds: 1_772_442_900_000))
        let decisions = try #require(try await facade.sentMessage("old", now: Self.now))
        #expect(decisions.count == 2)
        #expect(decisions.first?.receiver == "u2")
        #expect(decisions.first?.decision == .push(APNsRequest(payload: Array(payload.utf8), deliveries: [APNsDelivery(device: device)], badgeCounter: 3)))
        #expect(decisions.first?.decision.request?.deliveries.first?.hasStandardHeaders == true)
        #expect(decisions.last?.receiver == "u3")
        #expect(decisions.last?.decision == .suppressed(.noDevice))
    }

    @Test func aDamagedRepeatRecordIsAStoreFailureAndChangesNothing() async throws {
        let path = temporaryDatabase()
        let facade = PushFacade(store: try SQLiteStateStore(path: path))
        try await facade.configure(Self.app)
        try await Self.bind(Self.phone, certificate: "phone", user: "u2", in: facade)
        _ = try await facade.send(Self.message("m1"), dialect: "agora-silent", now: Self.now)
        _ = try sqlite(path, #"UPDATE sent_messages SET decisions = '[{"r":"u2","push"' WHERE message_id = 'm1'"#)
        let reopened = PushFacade(store: try SQLiteStateStore(path: path))
        await #expect {
            try await reopened.send(Self.message("m1"), dialect: "agora-silent", now: Self.now.adding(seconds: 1))
        } throws: { error in
            (error as? StoreError)?.code == .unexpectedValue && "\(error)".contains("the sent-message record of \"m1\" is damaged")
        }
        #expect(try await reopened.user("u2")?.state.badge == 1)

        // A record cut short (a real one, truncated) is damaged too.
        _ = try await facade.send(Self.message("m2"), dialect: "agora-silent", now: Self.now)
        _ = try sqlite(path, "UPDATE sent_messages SET decisions = substr(decisions, 1, length(decisions) - 3) WHERE message_id = 'm2'")
        await #expect {
            try await PushFacade(store: try SQLiteStateStore(path: path)).send(Self.message("m2"), dialect: "agora-silent", now: Self.now)
        } throws: { error in
            "\(error)".contains("the sent-message record of \"m2\" is damaged: it ends early")
        }
    }

    @Test func theCLIResetsOnOnlineAndAnswersARepeatIdentically() async throws {
        let (db, folder) = try ReliabilityScenario.prepareDatabase()
        let calls = folder + "/bind.json"
        try #"[{"call":"initializeSDK","appkey":"41117440#383391","apnsCertName":"agoraTest"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(Self.phone)"}]"#
            .write(toFile: calls, atomically: true, encoding: .utf8)
        let bind = try runTool(["apply", "--db", db, "--dialect", "agora-silent", "--user", "u2", calls])
        #expect(bind.status == 0, "\(bind.stderr)")
        let message = folder + "/m.json"
        func send(_ id: String) async throws -> String {
            try #"{"id":"\#(id)","conversationId":"u2","from":"u1","to":"u2","chatType":"Chat","body":{"type":"text","text":"hi"}}"#
                .write(toFile: message, atomically: true, encoding: .utf8)
            let run = try runTool(["send", "--db", db, "--dialect", "agora-silent", "--now", "2026-03-02T09:15:00Z", message])
            #expect(run.status == 0, "\(run.stderr)")
            return run.stdout
        }
        func presence(_ word: String) throws {
            let run = try runTool(["user", "--db", db, "--dialect", "agora-silent", "--user", "u2", "--presence", word])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let first = try await send("c1")
        #expect(first.contains(#""badge":1"#), "\(first)")
        #expect(try await send("c2").contains(#""badge":2"#))
        #expect(try await send("c2") == (try send("c2")), "a repeat prints the same bytes")
        try presence("online")
        try presence("offline")
        #expect(try await send("c3").contains(#""badge":1"#), "online reset the counter")

        let device = try runTool(["device", "--db", db, "--delete", "00ff"])
        #expect(device.status == 2)
        #expect(device.stderr.contains("--delete: at /token: expected a device token bound to a user"), "\(device.stderr)")
    }

    @Test func aDatabaseWrittenByThePreviousSchemaMigrates() async throws {
        let original = Repository.root.appendingPathComponent("Tests/Data/schema-2/old.sqlite").path
        let path = temporaryDatabase()
        try FileManager.default.copyItem(atPath: original, toPath: path)
        let store = try SQLiteStateStore(path: path)
        #expect(try store.appliedMigrations() == SQLiteStateStore.migrationIdentifiers)
        let facade = PushFacade(store: store)
        let u1 = try #require(try await facade.user("u1")).state
        #expect(u1.devices.map(\.token) == ["a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"])
        #expect(u1.displayName == "Alice")
        #expect(u1.app.window == DoNotDisturbWindow(startMinute: 22 * 60, endMinute: 8 * 60))
        let t1 = try #require(try await facade.user("t1")).state
        #expect(t1.devices.first?.certificate.busiId == "1234")
        #expect(t1.badge == 2)
        #expect(try await facade.members(of: "g1") == ["u1", "u2", "t1", "u3"])

        // The migrated devices decide and render as before; new sends are remembered.
        let message = try JSONParser.parse(
            #"{"target_type":"chatgroups","target":["g1"],"msg":{"type":"txt","msg":"again"},"from":"u1","id":"m2"}"#)
        let decisions = try await facade.send(message, dialect: "easemob-legacy", now: Instant(iso8601: "2026-03-02T09:20:00Z")!)
        #expect(decisions.map(\.receiver) == ["u2", "t1", "u3"])
        #expect(decisions[0].decision.request?.deliveries.map(\.device.token) == ["b1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"])
        #expect(Self.badge(decisions[0].decision) == 3)
        let toT1 = try #require(decisions[1].decision.request)
        #expect(toT1.deliveries.map(\.device.certificate.environment) == [.production])
        #expect(Self.badge(decisions[1].decision) == 3)
        #expect(decisions[2].decision == .suppressed(.noDevice))
        #expect(try await facade.send(message, dialect: "easemob-legacy", now: Instant(iso8601: "2026-03-02T09:21:00Z")!) == decisions)
    }
}
