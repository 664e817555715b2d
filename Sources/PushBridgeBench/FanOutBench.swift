import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

// Fan-out: one group message to 100,000 members, state in SQLite, end to end.

struct FanOutFigures {
    var firstMs: Double
    var warmMs: Double
    var decisions: Int
    var pushed: Int
    var loadMs: Double
    var badgeWriteMs: Double
    var foldMs: Double
    var repeatMs: Double
    var recordBytes: Int
    /// Writing out every pushed payload of a warm send's decisions (held as templates until read).
    var writeOutMs: Double
    /// Freeing one send's decisions (the warm figure includes freeing the send's before it).
    var freeMs: Double
}

/// Builds a database of `members` group members with a realistic mix of state, reopens it, and times
/// `facade.send` (load, decide, render, badge updates and the repeat record committed): the first
/// send after opening the database, then the median of `rounds` warm sends (a new message id each).
func fanOut(members: Int, rounds: Int) async throws -> FanOutFigures {
    let folder = try makeTemporaryFolder("pushbridge-fanout")
    let path = folder.appendingPathComponent("state.db").path
    do {
        let store = try SQLiteStateStore(path: path)
        let facade = PushFacade(store: store)
        let certificate = Certificate(name: "agoraTest", busiId: nil, bundleId: "io.agora.chatdemo", environment: .production)
        try await facade.configure(AppConfiguration(certificates: [certificate]))
        let ids = (0..<members).map { "user-\($0)" }
        let shanghai = TimeZone(identifier: "Asia/Shanghai")!
        try store.write { transaction in
            for (i, id) in ids.enumerated() {
                var state = UserState(user: id, displayStyle: i % 3 == 0 ? .simpleBanner : .messageSummary, backgroundGraceSeconds: 120,
                    timeZone: i % 4 == 0 ? shanghai : TimeZone(identifier: "UTC")!)
                if i % 10 != 9 { state.devices = [Device(token: String(format: "%064x", i), certificate: certificate)] }
                if i % 17 == 0 { state.presence = .online }
                if i % 13 == 0 { state.app.window = DoNotDisturbWindow(startMinute: 22 * 60, endMinute: 8 * 60) }
                if i % 11 == 0 { state.conversations[ConversationKey(.group, "big")] = ConversationPushSettings(remindType: .mentionOnly) }
                if i % 23 == 0 { state.language = "de" }
                state.badge = i % 7
                try transaction.save(state, replacing: nil)
            }
        }
        try await facade.setMembers(ids, of: "big")
    }
    // A new message id each send: a repeated id is answered from its record (Specification §10), not decided.
    let messages = try (0...rounds + 1).map { round in
        try JSONParser.parse(
            #"{"id":"m\#(round)","conversationId":"big","from":"user-1","to":"big","chatType":"GroupChat","body":{"type":"text","text":"Standup in 5 minutes"},"ext":{"em_at_list":["user-11"]}}"#)
    }
    let now = Instant(iso8601: "2026-03-02T09:15:00Z")!
    // `--only-fanout --first N`: N first sends, each by a store opened anew (for profiling the first send).
    if let index = arguments.firstIndex(of: "--first"), let count = Int(arguments[index + 1]) {
        var times: [Int] = []
        for round in 0..<count {
            let message = try JSONParser.parse(
                #"{"id":"f\#(round)","conversationId":"big","from":"user-1","to":"big","chatType":"GroupChat","body":{"type":"text","text":"Standup in 5 minutes"},"ext":{"em_at_list":["user-11"]}}"#)
            let store = try SQLiteStateStore(path: path)
            let facade = PushFacade(store: store)
            times.append(Int(try await median(1) { _ = try await facade.send(message, dialect: "agora-silent", now: now) } * 1000))
        }
        print("first sends (ms): \(times)")
    }
    let store = try SQLiteStateStore(path: path)  // opened anew: nothing of the members is in memory
    let facade = PushFacade(store: store)
    var decisions: [PushFacade.ReceiverDecision] = []
    let first = try await median(1) { decisions = try await facade.send(messages[0], dialect: "agora-silent", now: now) }
    var round = 0
    let warm = try await median(rounds) {
        round += 1
        decisions = try await facade.send(messages[round], dialect: "agora-silent", now: now)
    }
    var payloadBytes = 0
    let writeOut = median(3) { payloadBytes = decisions.reduce(0) { $0 + ($1.decision.request?.payload.count ?? 0) } }
    if payloadBytes == 0 { fail("fan-out: no payload bytes written out") }
    let repeated = try await median(3) { _ = try await facade.send(messages[1], dialect: "agora-silent", now: now) }
    // The members' rows loaded by a store opened anew (what a first send reads; a warm one reads none).
    let load = try median(3) {
        _ = try SQLiteStateStore(path: path).read { try $0.receivers(of: .group("big"), excluding: "user-1", conversation: ConversationKey(.group, "big")) }
    }
    let badges = decisions.enumerated().compactMap { i, d in d.decision.request.map { (key: UserKey(rawValue: Int64(i + 1)), badge: $0.badgeCounter + 1) } }
    let write = try median(3) { try store.write { try $0.setBadges(badges) } }
    // Folding the log the sends left (each counted member once), as a send past the limit does.
    let fold = try median(1) { try store.foldBadgeLog() }
    let record = try store.read { try $0.sentMessage("m0", since: Instant(milliseconds: 0)) }?.count ?? 0
    let (count, pushed) = (decisions.count, decisions.filter { $0.decision.request != nil }.count)
    let free = median(1) { decisions = [] }
    return FanOutFigures(firstMs: first * 1000, warmMs: warm * 1000, decisions: count,
        pushed: pushed, loadMs: load * 1000, badgeWriteMs: write * 1000, foldMs: fold * 1000,
        repeatMs: repeated * 1000, recordBytes: record, writeOutMs: writeOut * 1000, freeMs: free * 1000)
}
