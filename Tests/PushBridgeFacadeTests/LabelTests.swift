import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgeStore
import PushBridgeStoreTestSupport
import Testing

/// Push labels on every store (Easemob / Agora Chat `/push/label`): the same answers from the memory
/// twin, SQLite and PostgreSQL, refusals writing nothing.
@Suite("Push labels")
struct LabelTests {
    static func label(_ name: String, at ms: Int64 = 1_000) -> PushLabel {
        PushLabel(key: name, name: name, description: "about \(name)", createdAt: Instant(milliseconds: ms))
    }

    @Test("labels: created once, listed in code-point order a page at a time, the most an app has refused", arguments: FacadeScenario.Backing.allCases)
    func labels(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        #expect(try await facade.labels(after: nil, limit: 100).isEmpty)
        #expect(try await facade.label("vip") == nil)
        let stored = try await facade.createLabel(Self.label("vip"), maximum: 4)
        #expect(stored == Self.label("vip"))
        #expect(try await facade.label("vip") == Self.label("vip"))
        await #expect(throws: PushFacade.LabelRefusal.labelExists("vip")) { try await facade.createLabel(Self.label("vip", at: 2_000), maximum: 4) }
        for name in ["b.2", "Z-1", "a_3"] { _ = try await facade.createLabel(Self.label(name), maximum: 4) }
        await #expect(throws: PushFacade.LabelRefusal.tooManyLabels("more", maximum: 4)) { try await facade.createLabel(Self.label("more"), maximum: 4) }
        // Code-point order: upper case before lower, "." before letters.
        #expect(try await facade.labels(after: nil, limit: 100).map(\.key) == ["Z-1", "a_3", "b.2", "vip"])
        #expect(try await facade.labels(after: nil, limit: 2).map(\.key) == ["Z-1", "a_3"])
        #expect(try await facade.labels(after: "a_3", limit: 2).map(\.key) == ["b.2", "vip"])
        #expect(try await facade.labels(after: "vip", limit: 2).isEmpty)
        // The refused create wrote nothing; delete frees a place.
        #expect(try await facade.label("vip")?.createdAt == Instant(milliseconds: 1_000))
        try await facade.deleteLabel("b.2", named: "b.2")
        await #expect(throws: PushFacade.LabelRefusal.unknownLabel("b.2")) { try await facade.deleteLabel("b.2", named: "b.2") }
        _ = try await facade.createLabel(Self.label("more"), maximum: 4)
        #expect(try await facade.labels(after: nil, limit: 100).map(\.key) == ["Z-1", "a_3", "more", "vip"])
    }

    @Test("a label's users: known users added once up to the most a label has, paged, checked, removed; a forgotten user leaves", arguments: FacadeScenario.Backing.allCases)
    func labelUsers(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        for user in ["u1", "u2", "u3", "U0"] { _ = try await facade.register(user, dialect: "agora-silent") }
        _ = try await facade.createLabel(Self.label("vip"))
        await #expect(throws: PushFacade.LabelRefusal.unknownLabel("nope")) {
            try await facade.addUsers(["u1"], toLabel: "nope", named: "nope", at: Instant(milliseconds: 5))
        }
        let first = try await facade.addUsers(["u2", "ghost", "u1", "u2"], toLabel: "vip", named: "vip", at: Instant(milliseconds: 10), maximum: 3)
        #expect(first.succeeded == ["u2", "u1"])
        #expect(first.failed == [.init(user: "ghost", failure: .unknownUser)])
        // Already in: succeeds and keeps its time; past the most: refused.
        let second = try await facade.addUsers(["u1", "U0", "u3"], toLabel: "vip", named: "vip", at: Instant(milliseconds: 20), maximum: 3)
        #expect(second.succeeded == ["u1", "U0"])
        #expect(second.failed == [.init(user: "u3", failure: .labelFull(maximum: 3))])
        #expect(try await facade.label("vip")?.count == 3)
        let all = try await facade.labelUsers("vip", named: "vip", after: nil, limit: 100)
        #expect(all == [LabelUser(user: "U0", addedAt: Instant(milliseconds: 20)), LabelUser(user: "u1", addedAt: Instant(milliseconds: 10)), LabelUser(user: "u2", addedAt: Instant(milliseconds: 10))])
        #expect(try await facade.labelUsers("vip", named: "vip", after: "U0", limit: 1).map(\.user) == ["u1"])
        #expect(try await facade.labelUser("vip", named: "vip", user: "u2") == LabelUser(user: "u2", addedAt: Instant(milliseconds: 10)))
        #expect(try await facade.labelUser("vip", named: "vip", user: "u3") == nil)
        await #expect(throws: PushFacade.LabelRefusal.unknownLabel("gone")) { try await facade.labelUsers("gone", named: "gone", after: nil, limit: 5) }
        // Remove: a known user not in the label succeeds, an unknown one fails.
        let removed = try await facade.removeUsers(["u2", "u3", "ghost"], fromLabel: "vip", named: "vip")
        #expect(removed.succeeded == ["u2", "u3"] && removed.failed == [.init(user: "ghost", failure: .unknownUser)])
        #expect(try await facade.labelUsers("vip", named: "vip", after: nil, limit: 100).map(\.user) == ["U0", "u1"])
        // A forgotten user leaves every label.
        try await facade.removeUser("u1")
        #expect(try await facade.labelUsers("vip", named: "vip", after: nil, limit: 100).map(\.user) == ["U0"])
        // A deleted label's users go with it.
        try await facade.deleteLabel("vip", named: "vip")
        _ = try await facade.createLabel(Self.label("vip"))
        #expect(try await facade.label("vip")?.count == 0)
        #expect(try await facade.labelUsers("vip", named: "vip", after: nil, limit: 100).isEmpty)
    }
}

/// Push tasks on every store: the limit, the audience in pages (labels intersected, or every user),
/// a page recorded once, cancelling.
@Suite("Push tasks")
struct PushTaskTests {
    static func task(_ id: Int64, labels: [String] = [], any: [String] = [], at ms: Int64 = 1_000_000, startAt: Int64? = nil) -> PushTask {
        PushTask(
            id: id, family: "easemob", audience: TaskAudience(all: labels, any: any), request: Array(#"{"pushMessage":{"content":"hi"}}"#.utf8), createdAt: Instant(milliseconds: ms),
            startAt: Instant(milliseconds: startAt ?? ms))
    }

    @Test("a task's labels must exist; past the limit of pending or recent tasks it is refused; a refused task writes nothing", arguments: FacadeScenario.Backing.allCases)
    func limits(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        _ = try await facade.createLabel(LabelTests.label("vip"))
        await #expect(throws: PushFacade.LabelRefusal.unknownLabel("VIPs")) {
            try await facade.createTask(Self.task(1, labels: ["vip", "vips"]), labelNames: ["vip", "VIPs"], limit: 2, windowSeconds: 300)
        }
        _ = try await facade.createTask(Self.task(2, labels: ["vip"]), labelNames: ["vip"], limit: 2, windowSeconds: 300)
        _ = try await facade.createTask(Self.task(3, at: 1_100_000), labelNames: [], limit: 2, windowSeconds: 300)
        await #expect(throws: PushFacade.TaskRefusal.tooManyTasks(limit: 2, seconds: 300)) {
            try await facade.createTask(Self.task(4, at: 1_200_000), labelNames: [], limit: 2, windowSeconds: 300)
        }
        #expect(try await facade.tasks(.recent(limit: 10)).map(\.id) == [3, 2])
        // Ended and older than the window: no longer counted.
        #expect(try await facade.cancelTask(2, at: Instant(milliseconds: 1_300_000)).state == .cancelled)
        #expect(try await facade.cancelTask(2, at: Instant(milliseconds: 1_400_000)).endedAt == Instant(milliseconds: 1_300_000))
        _ = try await facade.createTask(Self.task(5, at: 1_400_001), labelNames: [], limit: 2, windowSeconds: 300)
        #expect(try await facade.tasks(.pending).map(\.id) == [3, 5])
        await #expect(throws: PushFacade.TaskRefusal.unknownTask(9)) { try await facade.cancelTask(9, at: Instant(milliseconds: 0)) }
    }

    @Test("receivers in pages after the cursor: every user, or those in all the task's labels; a page recorded once", arguments: FacadeScenario.Backing.allCases)
    func pages(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        let users = ["u5", "U1", "u2", "u3", "u4", "a"]
        for user in users { _ = try await facade.register(user, dialect: "agora-silent") }
        for label in ["one", "two"] { _ = try await facade.createLabel(LabelTests.label(label)) }
        _ = try await facade.addUsers(["u2", "u3", "u4", "U1"], toLabel: "one", named: "one", at: Instant(milliseconds: 1))
        _ = try await facade.addUsers(["u3", "u4", "u5", "U1"], toLabel: "two", named: "two", at: Instant(milliseconds: 1))
        _ = try await facade.createTask(Self.task(1, labels: ["one", "two"]), labelNames: ["one", "two"], limit: 3, windowSeconds: 300)
        _ = try await facade.createTask(Self.task(2), labelNames: [], limit: 3, windowSeconds: 300)
        // Both labels: U1, u3, u4 in code-point order, two at a time.
        var page = try #require(try await facade.nextReceivers(of: 1, limit: 2))
        #expect(page.receivers == ["U1", "u3"] && page.task.cursor == nil)
        #expect(try await facade.recordPage(of: 1, from: nil, to: "u3", adding: TaskProgress(targets: 2, pushed: 1, suppressed: ["no-device": 1]), finished: false, at: Instant(milliseconds: 5)))
        // The same page recorded again (another runner): refused, nothing counted twice.
        #expect(try await !facade.recordPage(of: 1, from: nil, to: "u3", adding: TaskProgress(targets: 2, pushed: 2), finished: false, at: Instant(milliseconds: 5)))
        page = try #require(try await facade.nextReceivers(of: 1, limit: 2))
        #expect(page.receivers == ["u4"] && page.task.cursor == "u3")
        #expect(try await facade.recordPage(of: 1, from: "u3", to: "u4", adding: TaskProgress(targets: 1, suppressed: ["no-device": 1]), finished: true, at: Instant(milliseconds: 6)))
        let status = try #require(try await facade.taskStatus(1))
        #expect(status.task.state == .finished && status.task.endedAt == Instant(milliseconds: 6))
        #expect(status.task.progress == TaskProgress(targets: 3, pushed: 1, suppressed: ["no-device": 2]))
        #expect(status.deliveries == OutboxCounts(queued: 0, delivered: 0, failed: 0))
        #expect(try await facade.nextReceivers(of: 1, limit: 2) == nil)
        // Every user.
        var all: [String] = []
        var cursor: String?
        while let next = try await facade.nextReceivers(of: 2, limit: 4), !next.receivers.isEmpty {
            all += next.receivers
            #expect(try await facade.recordPage(of: 2, from: cursor, to: next.receivers.last, adding: TaskProgress(targets: next.receivers.count), finished: false, at: Instant(milliseconds: 7)))
            cursor = next.receivers.last
        }
        #expect(all == ["U1", "a", "u2", "u3", "u4", "u5"])
        // A cancelled task gives no receivers.
        #expect(try await facade.cancelTask(2, at: Instant(milliseconds: 8)).state == .cancelled)
        #expect(try await facade.nextReceivers(of: 2, limit: 4) == nil)
    }

    @Test("a page is sent with its record or not at all: a stale cursor or an ended task sends nothing; a deleted receiver counts unknown-user", arguments: FacadeScenario.Backing.allCases)
    func pageSentWithItsRecord(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        for user in ["u1", "u2"] { try await FacadeScenario.register(user, in: facade) }
        _ = try await facade.register("u3", dialect: "agora-silent")  // no device
        _ = try await facade.createTask(Self.task(1), labelNames: [], limit: 3, windowSeconds: 300)
        func batch(_ receivers: [String]) throws -> [PushFacade.PreparedMessage] {
            try receivers.map { user in
                var prepared = try facade.prepare(
                    FacadeScenario.json(#"{"id":"task-1-\#(user)","conversationId":"\#(user)","from":"admin","to":"\#(user)","chatType":"Chat","body":{"type":"text","text":"hi"}}"#),
                    dialect: "agora-silent", now: FacadeScenario.now)
                prepared.requiredTargets = [.user(user)]
                return prepared
            }
        }
        let seen = try #require(try await facade.tasks(.task(1)).first)
        let first = try #require(try await facade.nextReceivers(after: seen, limit: 2))
        #expect(first.receivers == ["u1", "u2"])
        let page = try #require(try await facade.sendPage(of: 1, from: nil, receivers: first.receivers, sending: try batch(first.receivers), finished: false, at: FacadeScenario.now))
        #expect(page.progress == TaskProgress(targets: 2, pushed: 2) && page.task.cursor == "u2" && page.sent.map(\.index) == [0, 1])
        #expect(try await facade.user("u1")?.state.badge == 1)
        // The same page again (another runner read it before the record): nothing sent, nothing counted.
        #expect(try await facade.sendPage(of: 1, from: nil, receivers: first.receivers, sending: try batch(first.receivers), finished: false, at: FacadeScenario.now) == nil)
        #expect(try await facade.user("u1")?.state.badge == 1)
        #expect(try await facade.user("u2")?.state.badge == 1)
        // Read after the cursor the runner last saw: the task as it is now and the next page.
        let second = try #require(try await facade.nextReceivers(after: seen, limit: 2))
        #expect(second.receivers == ["u3"] && second.task.cursor == "u2")
        // A receiver deleted since the page was read is left out and counted; the task finishes.
        let ended = try #require(try await facade.sendPage(
            of: 1, from: "u2", receivers: ["u3", "u4"], sending: try batch(["u3", "u4"]), finished: true, at: FacadeScenario.now))
        #expect(ended.progress == TaskProgress(targets: 2, suppressed: ["no-device": 1, "unknown-user": 1]))
        #expect(ended.task.state == .finished && ended.task.progress == TaskProgress(targets: 4, pushed: 2, suppressed: ["no-device": 1, "unknown-user": 1]))
        #expect(try await facade.nextReceivers(after: seen, limit: 2) == nil)
        #expect(try await facade.sendPage(of: 1, from: "u3", receivers: [], sending: [], finished: true, at: FacadeScenario.now) == nil)
    }

    @Test("a page longer than a part is written in parts where requests can come between them: every receiver once, in order, the task's cursor at the last", arguments: FacadeScenario.Backing.allCases)
    func pageInParts(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        let users = (0..<(2 * PushFacade.pagePartReceivers + 20)).map { String(format: "r%03d", $0) }
        for user in users { try await FacadeScenario.register(user, in: facade) }
        _ = try await facade.createTask(Self.task(1), labelNames: [], limit: 3, windowSeconds: 300)
        let seen = try #require(try await facade.tasks(.task(1)).first)
        let read = try #require(try await facade.nextReceivers(after: seen, limit: users.count))
        #expect(read.receivers == users)
        let batch = try users.map { user in
            var prepared = try facade.prepare(
                FacadeScenario.json(#"{"id":"task-1-\#(user)","conversationId":"\#(user)","from":"admin","to":"\#(user)","chatType":"Chat","body":{"type":"text","text":"hi"}}"#),
                dialect: "agora-silent", now: FacadeScenario.now)
            prepared.requiredTargets = [.user(user)]
            return prepared
        }
        let page = try #require(try await facade.sendPage(of: 1, from: nil, receivers: users, sending: batch, finished: true, at: FacadeScenario.now))
        #expect(page.sent.map(\.index) == Array(users.indices))
        #expect(page.sent.map { $0.outcome.decisions.map(\.receiver) } == users.map { [$0] })
        #expect(page.progress == TaskProgress(targets: users.count, pushed: users.count))
        #expect(page.task.state == .finished && page.task.cursor == users.last && page.task.progress == page.progress)
        for user in [users.first!, users[PushFacade.pagePartReceivers], users.last!] {
            #expect(try await facade.user(user)?.state.badge == 1, "\(user)")
        }
        #expect(try await facade.tasks(.task(1)).first == page.task)
    }
}
