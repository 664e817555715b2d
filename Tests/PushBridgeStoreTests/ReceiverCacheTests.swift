import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
@testable import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The SQLite writer keeps a group's receivers between sends. Whatever changes them (the facade's
/// own calls, another connection's commit, a rollback, a group commit's refused writer), the kept
/// receivers must equal a fresh load, and every decision must equal a full per-receiver decide.
@Suite("Kept group receivers")
struct ReceiverCacheTests {
    static let group = "g1"
    static let conversation = ConversationKey(.group, group)
    static let certificate = FacadeScenario.app.certificates[0]

    /// A receiver as a comparable value.
    struct Row: Equatable, CustomStringConvertible {
        var key: Int64?
        var state: UserState
        var configured: Bool
        var description: String { "\(state.user) key \(key.map(String.init) ?? "none") badge \(state.badge) devices \(state.devices.count)" }
    }

    static func rows(_ receivers: StoredReceivers) -> [Row] {
        receivers.map { Row(key: $0.key?.rawValue, state: $0.state, configured: $0.isConfigured) }
    }

    /// A database with `members` members of varied state (a send to 64 or more logs its counters as one row).
    static func populated(members: Int = 30, options: SQLiteStateStore.Options = .init()) async throws -> (path: String, store: SQLiteStateStore, facade: PushFacade) {
        let path = temporaryDatabase()
        let store = try SQLiteStateStore(path: path, options: options)
        let facade = PushFacade(store: store)
        try await facade.configure(FacadeScenario.app)
        try store.write { transaction in
            for i in 0..<members {
                var state = UserState(user: "m\(i)", displayStyle: i % 3 == 0 ? .simpleBanner : .messageSummary, backgroundGraceSeconds: 120,
                    timeZone: TimeZone(identifier: i % 4 == 0 ? "Asia/Shanghai" : "UTC")!)
                if i % 5 != 4 { state.devices = [Device(token: FacadeScenario.token(of: "m\(i)"), certificate: certificate)] }
                if i % 7 == 0 { state.presence = .online }
                if i % 6 == 1 { state.app.window = DoNotDisturbWindow(startMinute: 22 * 60, endMinute: 8 * 60) }
                if i % 8 == 2 { state.conversations[conversation] = ConversationPushSettings(remindType: .mentionOnly) }
                if i % 9 == 3 { state.language = "de" }
                state.badge = i % 4
                try transaction.save(state, replacing: nil)
            }
        }
        // Two members known only by id (unconfigured), and one member twice over: never.
        try await facade.setMembers((0..<members).map { "m\($0)" } + ["x1", "x2"], of: group)
        return (path, store, facade)
    }

    /// The receivers of a message from `sender` as the writer keeps them.
    static func kept(_ store: SQLiteStateStore, sender: UserID = "m0") throws -> [Row] {
        try store.write { rows(try $0.receivers(of: .group(group), excluding: sender, conversation: conversation)) }
    }

    /// The same loaded by a store opened anew (nothing kept), by the join; a load by scans (which
    /// a big group gets) must read exactly the same.
    static func fresh(_ path: String, sender: UserID = "m0", sourceLocation: SourceLocation = #_sourceLocation) throws -> [Row] {
        let joined = try load(path, sender: sender, plan: .join)
        #expect(try load(path, sender: sender, plan: .scan) == joined, "the scans and the join, sender \(sender)", sourceLocation: sourceLocation)
        return joined
    }

    /// The group's receivers read by a store opened anew that loads groups by `plan`.
    static func load(_ path: String, group: String = group, conversation: ConversationKey = conversation, sender: UserID = "m0", plan: GroupLoad) throws -> [Row] {
        var options = SQLiteStateStore.Options()
        options.groupLoad = plan
        return try SQLiteStateStore(path: path, options: options).read {
            rows(try $0.receivers(of: .group(group), excluding: sender, conversation: conversation))
        }
    }

    /// Sends a group message through the facade (kept receivers) and checks each decision against
    /// a full decide of each member's whole state from a fresh store, counted before the send.
    @discardableResult
    static func sendMatchesFullDecide(_ facade: PushFacade, path: String, id: String, sender: UserID = "m0") async throws -> [PushFacade.ReceiverDecision] {
        let prepared = try facade.prepare(
            FacadeScenario.groupMessage(from: sender, to: group, text: "standup", id: id), dialect: "agora-silent", now: FacadeScenario.now)
        let reference = try SQLiteStateStore(path: path).read { transaction -> [(receiver: UserID, decision: PushDecision)] in
            let decider = PushDecider(app: try transaction.app())
            let senderState = try transaction.user(sender)?.state
            return try transaction.members(of: group).filter { $0 != sender }.map { member in
                let record = try #require(try transaction.user(member))
                let state = record.isConfigured ? record.state : try facade.adapter("agora-silent").newUser(member, timeZone: record.state.timeZone)
                return (member, decider.decide(prepared.message, sender: senderState, receiver: state, profile: prepared.profile, now: prepared.now))
            }
        }
        let sent = try await facade.send(prepared).decisions
        #expect(sent.count == reference.count)
        #expect(try await facade.sentMessage(id, now: FacadeScenario.now) == sent, "the repeat record of \(id)")
        for (got, want) in zip(sent, reference) {
            #expect(got.receiver == want.receiver)
            #expect(got.decision == want.decision, "receiver \(want.receiver) of \(id)")
        }
        return sent
    }

    /// Small groups (counters updated in place), big ones (the badge log), and a log folded every other send.
    static let shapes: [(members: Int, badgeLogLimit: Int)] = [(30, 1_000_000), (160, 1_000_000), (160, 250)]

    @Test("a sender anywhere in a big kept group is left out as a fresh load leaves it out: early rows, past the scanned ones, the last, unconfigured, not a member")
    func sendersAnywhere() async throws {
        let (path, store, facade) = try await Self.populated(members: 300)
        // The first lookups scan; one past the first 64 rows indexes the names, which later ones use.
        for sender in ["m0", "m5", "m63", "m64", "m200", "m299", "x2", "stranger", "m1", "m250", "x1"] {
            let kept = try Self.kept(store, sender: sender)
            #expect(kept == (try Self.fresh(path, sender: sender)), "sender \(sender)")
            let isMember = sender != "stranger"
            #expect(kept.count == (isMember ? 301 : 302), "sender \(sender)")
            #expect(!kept.contains { $0.state.user == sender }, "sender \(sender)")
        }
        // A send from far down the group decides exactly as a full decide, then again from the top.
        try await Self.sendMatchesFullDecide(facade, path: path, id: "far", sender: "m280")
        try await Self.sendMatchesFullDecide(facade, path: path, id: "near", sender: "m2")
    }

    @Test("a group read by scans is the join's, row for row: users outside it, membership not in row order, several devices, other conversations' settings, counters logged and folded")
    func scansReadWhatTheJoinReads() async throws {
        let path = temporaryDatabase()
        let store = try SQLiteStateStore(path: path, options: .init(badgeLogLimit: 150))
        let facade = PushFacade(store: store)
        try await facade.configure(FacadeScenario.app)
        let other = Certificate(name: "second", busiId: nil, bundleId: "io.example.second", environment: .production)
        try store.write { transaction in
            for i in 0..<240 {
                // Users outside the group between the members (the scans step over their rows).
                var state = UserState(user: i % 3 == 2 ? "outsider\(i)" : "m\(i)", displayStyle: i % 2 == 0 ? .simpleBanner : .messageSummary,
                    backgroundGraceSeconds: 60, timeZone: TimeZone(identifier: ["UTC", "Asia/Shanghai", "Europe/Berlin", "America/New_York"][i % 4])!)
                // None, one, or up to four devices, bound in one save (the newest first) or over several.
                state.devices = (0..<(i % 5)).map { Device(token: FacadeScenario.token(of: "m\(i)-\($0)"), certificate: $0 % 2 == 0 ? Self.certificate : other,
                    boundAt: Instant(milliseconds: Int64(i * 10 + $0))) }
                if i % 7 == 0 { state.presence = .online }
                if i % 11 == 1 { state.presence = .background(since: Instant(milliseconds: 5_000)) }
                if i % 6 == 1 { state.app.window = DoNotDisturbWindow(startMinute: 22 * 60, endMinute: 8 * 60) }
                if i % 8 == 2 { state.conversations[Self.conversation] = ConversationPushSettings(remindType: .mentionOnly) }
                if i % 8 == 3 { state.conversations[Self.conversation] = ConversationPushSettings(silentPeriod: SilentPeriod(start: Instant(milliseconds: 1), until: Instant(milliseconds: 9_000_000_000_000))) }
                // The same id as another kind of conversation, and another group: never this one's.
                if i % 5 == 0 { state.conversations[ConversationKey(.oneToOne, Self.group)] = ConversationPushSettings(remindType: RemindType.none) }
                if i % 4 == 1 { state.conversations[ConversationKey(.group, "g2")] = ConversationPushSettings(remindType: RemindType.none) }
                if i % 9 == 3 { state.language = "de" }
                if i % 10 == 4 { state.groupSound = "ping.caf" }
                state.badge = i % 4
                try transaction.save(state, replacing: nil)
            }
        }
        // Membership in an order of its own, members known only by name (unconfigured), and a
        // device bound again later (it moves to the front of its member's devices).
        var members = (0..<240).filter { $0 % 3 != 2 }.map { "m\($0)" }
        members = members.enumerated().sorted { ($0.offset * 37) % members.count < ($1.offset * 37) % members.count }.map(\.element)
        try await facade.setMembers(["x1"] + members + ["x2"], of: Self.group)
        try await facade.updateUser("m4", dialect: "agora-silent") { $0.devices.insert(Device(token: FacadeScenario.token(of: "m9-1"), certificate: Self.certificate), at: 0) }
        try await facade.updateUser("m13", dialect: "agora-silent") { $0.devices.reverse() }
        func same(_ what: String) async throws {
            for sender in ["m0", "m100", "x2", "outsider2"] {
                let joined = try Self.load(path, sender: sender, plan: .join)
                #expect(joined.count == members.count + 2 - (sender.hasPrefix("outsider") ? 0 : 1), "\(what), sender \(sender)")
                #expect(try Self.load(path, sender: sender, plan: .scan) == joined, "\(what), sender \(sender)")
                #expect(try Self.load(path, sender: sender, plan: .automatic) == joined, "\(what), sender \(sender)")
            }
            #expect(try Self.load(path, conversation: ConversationKey(.group, "g2"), plan: .scan)
                == Self.load(path, conversation: ConversationKey(.group, "g2"), plan: .join), "\(what), another conversation's settings")
            #expect(try Self.load(path, group: "none", plan: .scan).isEmpty, "\(what), a group without members")
        }
        let m13 = try #require(try Self.load(path, plan: .join).first { $0.state.user == "m13" })
        #expect(m13.state.devices.map(\.token) == (0..<3).reversed().map { FacadeScenario.token(of: "m13-\($0)") })
        try await same("as saved")
        for round in 0..<4 {  // counters logged (a send to the group), then folded past the limit
            _ = try await facade.send(FacadeScenario.groupMessage(from: "m1", to: Self.group, id: "s\(round)"), dialect: "agora-silent", now: FacadeScenario.now)
            try await same("after send \(round)")
        }
    }

    @Test("kept receivers equal a fresh load, and decisions a full decide, after every kind of change", arguments: shapes)
    func keptReceiversStayTrue(members: Int, badgeLogLimit: Int) async throws {
        let (path, store, facade) = try await Self.populated(members: members, options: .init(badgeLogLimit: badgeLogLimit))
        // A store that only reads, open all along: it reads on from where it was, or again after a fold.
        let reader = try SQLiteStateStore(path: path)
        var round = 0
        // Every send's decisions: its record (referring to the roll of names and devices it was
        // sent to) gives them back byte for byte after whatever changed since.
        var sent: [(id: String, decisions: [PushFacade.ReceiverDecision])] = []
        func check(_ what: String, sender: UserID = "m0") async throws {
            round += 1
            let fresh = try Self.fresh(path, sender: sender)
            #expect(try Self.kept(store, sender: sender) == fresh, "after \(what)")
            #expect(try reader.read { Self.rows(try $0.receivers(of: .group(Self.group), excluding: sender, conversation: Self.conversation)) } == fresh,
                "a reader after \(what)")
            sent.append(("r\(round)", try await Self.sendMatchesFullDecide(facade, path: path, id: "r\(round)", sender: sender)))
            // The kept group's requests refer to their rows' devices; equal to full decides all the same.
            let requests = sent.last!.decisions.compactMap { if case .push(let request) = $0.fanOut { request } else { nil } }
            #expect(!requests.isEmpty && requests.allSatisfy { if case .row = $0.targets { true } else { false } }, "after \(what)")
            #expect(try Self.kept(store, sender: sender) == Self.fresh(path, sender: sender), "after \(what) and a send")
            for (id, decisions) in sent {
                #expect(try await facade.sentMessage(id, now: FacadeScenario.now) == decisions, "the record of \(id) after \(what)")
                #expect(try await PushFacade(store: reader).sentMessage(id, now: FacadeScenario.now) == decisions, "the record of \(id) read by a reader after \(what)")
            }
        }
        try await check("the first load")
        try await check("a warm send")
        try await check("another sender", sender: "m5")

        // The facade's own writes.
        try await facade.apply(FacadeScenario.json(#"{"call":"setSilentModeForConversation","conversationId":"g1","conversationType":"GroupChat","remindType":"None"}"#),
            dialect: "agora-silent", user: "m3", at: FacadeScenario.now)
        try await check("a conversation setting")
        try await facade.setPresence(.online, of: "m17", dialect: "agora-silent")  // pushed before: its counter is in the log when there is one
        try await check("a presence change")
        try store.foldBadgeLog()
        try await facade.updateUser("m22", dialect: "agora-silent") { $0.badge = 7 }  // in badge_counters, behind the reader's read of the log
        try await check("a fold, then a counter set")
        try await facade.updateUser("m11", dialect: "agora-silent") { $0.devices.insert(Device(token: FacadeScenario.token(of: "m12"), certificate: Self.certificate), at: 0) }
        try await check("a device moving from one member to another")
        try await facade.register("x1", dialect: "agora-silent")
        try await check("an unconfigured member registering")
        try await facade.addMembers(["late"], to: Self.group)
        try await check("a member added")
        try await facade.removeMember("m13", from: Self.group)
        try await check("a member removed")
        try await facade.removeUser("m14")
        try await check("a user forgotten")
        try await facade.removeDevice(token: FacadeScenario.token(of: "m15"))
        try await check("a device removed")

        // Another connection's commit (another process: the `pushbridge` tool beside a service).
        let other = PushFacade(store: try SQLiteStateStore(path: path))
        try await other.updateUser("m16", dialect: "agora-silent") { $0.badge = 40; $0.language = "fr" }
        try await check("another connection's commit")
        _ = try await other.send(FacadeScenario.groupMessage(from: "m1", to: Self.group, id: "other"), dialect: "agora-silent", now: FacadeScenario.now)
        try await check("another connection's send")

        // A rolled-back write.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.write { transaction in
                _ = try transaction.receivers(of: .group(Self.group), excluding: "m0", conversation: Self.conversation)
                var state = try #require(try transaction.user("m17")).state
                state.presence = .online
                try transaction.save(state, replacing: nil)
                try transaction.setBadges([(UserKey(rawValue: 19), 99)])
                throw Refused()
            }
        }
        try await check("a rolled-back write")
    }

    /// The stored roll a record refers to: its id, from the `PBR4` record's bytes.
    static func rollID(_ store: SQLiteStateStore, of id: String) throws -> UInt64? {
        let record = try #require(try store.read { try $0.sentMessage(id, since: Instant(milliseconds: 0)) })
        guard record.starts(with: Array("PBR4".utf8)) else { return nil }
        var value: UInt64 = 0
        for (i, byte) in record.dropFirst(4).prefix(9).enumerated() {
            value |= UInt64(byte & 0x7f) << (7 * UInt64(i))
            if byte < 0x80 { break }
        }
        return value
    }

    @Test("sends to a kept group share one stored roll until a member's name or devices change; rolls are forgotten with their records")
    func rollsAreSharedAndForgotten() async throws {
        let (path, store, facade) = try await Self.populated(members: 80)
        func send(_ id: String, from sender: UserID = "m0", at now: Instant = FacadeScenario.now) async throws -> [PushFacade.ReceiverDecision] {
            try await facade.send(FacadeScenario.groupMessage(from: sender, to: Self.group, id: id), dialect: "agora-silent", now: now)
        }
        let first = try await send("a")
        _ = try await send("b", from: "m5")  // another sender: the same rows, another left out
        try await facade.setPresence(.online, of: "m21", dialect: "agora-silent")  // a member changed, names and devices not
        _ = try await send("c")
        let roll = try #require(try Self.rollID(store, of: "a"))
        #expect(try Self.rollID(store, of: "b") == roll)
        #expect(try Self.rollID(store, of: "c") == roll)
        try await facade.updateUser("m21", dialect: "agora-silent") { $0.devices.append(Device(token: FacadeScenario.token(of: "new"), certificate: Self.certificate)) }
        _ = try await send("d")
        let second = try #require(try Self.rollID(store, of: "d"))
        #expect(second != roll, "a member's devices changed: a new roll")
        #expect(try await facade.sentMessage("a", now: FacadeScenario.now) == first, "the old roll stays for the records that refer to it")
        #expect(try await PushFacade(store: SQLiteStateStore(path: path)).sentMessage("a", now: FacadeScenario.now) == first, "read by another connection")

        // Two days on, a one-to-one send forgets the old records and, with them, both rolls; the
        // writer still keeps the group, and stores its roll again for the next send.
        let later = FacadeScenario.now.adding(seconds: 2 * 86_400)
        _ = try await facade.send(FacadeScenario.json(#"{"id":"o1","conversationId":"m2","from":"m1","to":"m2","chatType":"Chat","body":{"type":"text","text":"hi"}}"#),
            dialect: "agora-silent", now: later)
        #expect(try await facade.sentMessage("a", now: later) == nil)
        let again = try await send("e", at: later.adding(seconds: 1))
        let third = try #require(try Self.rollID(store, of: "e"))
        #expect(third != second && third != roll, "a forgotten roll's id is never used again")
        #expect(try await facade.sentMessage("e", now: later) == again)
        await #expect(try PushFacade(store: SQLiteStateStore(path: path)).send(FacadeScenario.groupMessage(from: "m0", to: Self.group, id: "e"),
            dialect: "agora-silent", now: later) == again, "a repeat through another connection")
    }

    @Test("the automatic plan scans a group of 4,096 members or more that is a quarter of the users and of the devices' row ids, and joins the others")
    func automaticPlan() throws {
        let path = temporaryDatabase()
        let store = try SQLiteStateStore(path: path)
        func scans(_ members: Int) throws -> Bool {
            try store.read { try ($0 as! SQLiteStateStore.Transaction).scans(members: members) }
        }
        _ = try sqlite(path, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO users (name) SELECT 'u' || i FROM n")
        #expect(try !scans(4_095))  // below the minimum, however dense
        #expect(try !scans(4_999))  // less than a quarter of 20,000 users
        #expect(try scans(5_000))
        _ = try sqlite(path, "INSERT INTO certificates (name, bundle_id, environment) VALUES ('c', 'b', 'production')")
        _ = try sqlite(path, "INSERT INTO devices (rowid, token, user_id, certificate_id, bound_at, sequence) VALUES (30000, 't', 1, 1, 0, 1)")
        #expect(try !scans(5_000))  // less than a quarter of the devices' row ids
        #expect(try scans(7_500))
    }

    @Test("a roll stored before its bytes had a table of their own is read after the migration, and pruned with its use")
    func rollBytesMoveToTheirTable() throws {
        let path = temporaryDatabase()
        let bytes = Array("PBL1".utf8) + (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        do {  // the schema of 0.14–0.16: a roll's bytes in its row
            let connection = try SQLiteConnection(path: path)
            try SQLiteStateStore.migrate(connection, migrations: Array(SQLiteStateStore.migrations.prefix { $0.identifier != "2026-11-27-receiver-roll-rows-table" }))
            try connection.statement("INSERT INTO receiver_rolls (used_at, rows) VALUES (?, ?)").bind(1, 5_000).bind(2, blob: bytes).run()
            try connection.statement("INSERT INTO receiver_rolls (used_at, rows) VALUES (?, ?)").bind(1, 9_000).bind(2, blob: [1, 2, 3]).run()
        }
        let store = try SQLiteStateStore(path: path)
        #expect(try store.appliedMigrations() == SQLiteStateStore.migrationIdentifiers)
        #expect(try store.read { try $0.roll(1) } == bytes)
        #expect(try store.read { try $0.roll(2) } == [1, 2, 3])
        #expect(try store.read { try $0.roll(3) } == nil)
        // Records older than 6 s forgotten: the first roll's time is past, both tables forget it.
        try store.write { try $0.recordSentMessages([], forgettingBefore: Instant(milliseconds: 6_000)) }
        #expect(try store.read { try $0.roll(1) } == nil)
        #expect(try store.read { try $0.roll(2) } == [1, 2, 3])
        #expect(try store.read { transaction -> Int in
            let rows = try (transaction as! SQLiteStateStore.Transaction).connection.statement("SELECT count(*) FROM receiver_roll_rows")
            return try rows.step() ? rows.int(0) : -1
        } == 1)
    }

    @Test("a group bigger than the limit is not kept, and decides the same")
    func overTheLimit() async throws {
        let (path, _, _) = try await Self.populated()
        let store = try SQLiteStateStore(path: path, options: .init(keptReceivers: 10))
        let facade = PushFacade(store: store)
        try await Self.sendMatchesFullDecide(facade, path: path, id: "a")
        let requests = try await Self.sendMatchesFullDecide(facade, path: path, id: "b").compactMap { if case .push(let request) = $0.fanOut { request } else { nil } }
        // Rows not kept are not referred to: each request holds its devices.
        #expect(!requests.isEmpty && requests.allSatisfy { if case .devices = $0.targets { true } else { false } })
        #expect(try Self.kept(store) == Self.fresh(path))
        // Nothing kept to share a stored roll with the next send: each record carries its receivers.
        #expect(try Self.rollID(store, of: "a") == nil)
        #expect(try Self.rollID(store, of: "b") == nil)
    }

    @Test("the store keeps one receiver cache, its writer's: a group read on a reader is loaded anew each time and kept by no reader")
    func readersKeepNoReceivers() async throws {
        let (path, _, _) = try await Self.populated()
        let store = try SQLiteStateStore(path: path)
        func receivers(_ transaction: any PushStateTransaction) throws -> StoredReceivers {
            try transaction.receivers(of: .group(Self.group), excluding: "m0", conversation: Self.conversation)
        }
        // Readers: each read loads the rows and keeps no table (a kept table's rows come with its roll).
        for _ in 0..<3 { #expect(try store.read { try receivers($0).roll } == nil) }
        // The writer keeps the group within the store's budget: its second read is the kept table.
        #expect(try store.write { try receivers($0).roll } != nil)
        let kept = try store.write { try receivers($0).roll }
        let again = try store.write { try receivers($0).roll }
        #expect(kept != nil && kept === again, "the writer's kept table is read again")
        #expect(try store.read { try receivers($0).roll } == nil, "still none on a reader")
    }
}
