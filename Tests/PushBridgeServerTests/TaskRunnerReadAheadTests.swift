import Logging
import PushBridgeCore
import PushBridgeFacade
@testable import PushBridgeServer
import PushBridgeServiceTestSupport
import PushBridgeStore
import PushBridgeTestSupport
import Testing

/// A push task's runner reads its next page, and prepares its messages, while it writes the page in
/// hand (on SQLite, whose pages are written in parts). A page read ahead is written only while the task's cursor is still the one it was read
/// after: another runner (another node) may have recorded that page meanwhile, or the task may
/// have been cancelled.
@Suite("Push task pages read ahead")
struct TaskRunnerReadAheadTests {
    /// Two runners of one app's task over one store, each two receivers a page: the first reads its
    /// second page ahead, the second records that page, the first's page read ahead is then not
    /// sent; the runners finish the task between them and every receiver is counted once.
    @Test("a page read ahead after a cursor another runner moved is read again, never sent twice")
    func aPageReadAheadIsSentOnlyWhileItsCursorHolds() async throws {
        let facade = try await Self.facade(users: 7)
        let task = try await Self.createTask(facade)
        let (a, b) = (Self.runner(facade, "a"), Self.runner(facade, "b"))
        let audience = try await facade.receivers(of: task, after: nil, limit: 100)
        #expect(audience.count >= 7, "\(audience)")

        #expect(try await a.runPage(of: task) == 2)
        let ahead = try #require(a.pageReadAhead, "the first runner read its next page while writing its first")
        #expect(ahead.cursor == audience[1] && ahead.receivers == Array(audience[2..<4]))
        // The second runner, as another node would, reads the task and records the page after its cursor.
        let moved = try #require(try await facade.tasks(.task(task.id)).first)
        #expect(moved.cursor == audience[1])
        #expect(try await b.runPage(of: moved) == 2)
        #expect(try await facade.tasks(.task(task.id)).first?.cursor == audience[3])
        // The first runner's page read ahead now follows a cursor that moved: nothing is written.
        #expect(try await a.step() == .ran(receivers: 2))
        #expect(a.pageReadAhead == nil)
        #expect(try await facade.tasks(.task(task.id)).first?.progress.targets == 4, "the page the second runner recorded is counted once")

        var steps = 0
        while steps < 20, try await facade.tasks(.task(task.id)).first?.state == .pending {
            _ = try await (steps % 2 == 0 ? a : b).step()
            steps += 1
        }
        let done = try #require(try await facade.tasks(.task(task.id)).first)
        #expect(done.state == .finished)
        #expect(done.progress.targets == audience.count, "every receiver counted once: \(done.progress)")
        // The same task run by one runner alone on a fresh app counts the same.
        let alone = try await Self.facade(users: 7)
        let single = Self.runner(alone, "alone")
        var next = try await Self.createTask(alone)
        while next.state == .pending, try await single.runPage(of: next) > 0 {
            next = try #require(try await alone.tasks(.task(task.id)).first)
        }
        #expect(next.state == .finished)
        #expect(done.progress == next.progress, "two runners: \(done.progress); one: \(next.progress)")
        for user in audience {
            let records = try await facade.deliveries(ofMessage: task.messagePrefix + user)
            #expect(records.count <= 2, "\(user)'s message queued once for each of its devices at most: \(records.count)")
        }
    }

    /// A task cancelled while its runner holds a page read ahead: that page is not sent.
    @Test("a page read ahead of a task cancelled meanwhile is not sent")
    func aPageReadAheadOfACancelledTaskIsNotSent() async throws {
        let facade = try await Self.facade(users: 5)
        let task = try await Self.createTask(facade)
        let runner = Self.runner(facade, "a")
        #expect(try await runner.runPage(of: task) == 2)
        #expect(runner.pageReadAhead != nil)
        _ = try await facade.cancelTask(task.id, at: .now)
        _ = try await runner.step()
        let cancelled = try #require(try await facade.tasks(.task(task.id)).first)
        #expect(cancelled.state == .cancelled)
        #expect(cancelled.progress.targets == 2, "only the first page: \(cancelled.progress)")
        #expect(runner.pageReadAhead == nil)
    }

    /// On a store that writes a page in one update (the memory twin, as PostgreSQL), and for a paced
    /// task, no page is read ahead; the task still runs to its end.
    @Test("no page is read ahead where a page is one update, nor for a paced task")
    func noPageReadAheadWherePagesAreOneUpdate() async throws {
        for (facade, paced) in [(try await Self.facade(users: 5, sqlite: false), false), (try await Self.facade(users: 5), true)] {
            var task = try await Self.createTask(facade)
            let runner = Self.runner(facade, "a", rate: paced ? 1_000 : nil)
            while task.state == .pending, try await runner.runPage(of: task) > 0 {
                #expect(runner.pageReadAhead == nil)
                task = try #require(try await facade.tasks(.task(task.id)).first)
            }
            #expect(task.state == .finished)
        }
    }

    /// The example app (u1 and u2 with devices) and users up to `u<users>`, members of a group, in a
    /// SQLite store of its own (or the memory twin).
    static func facade(users: Int, sqlite: Bool = true) async throws -> PushFacade {
        let store: any PushStateStore = sqlite ? try SQLiteStateStore(path: temporaryDatabase()) : MemoryStateStore()
        let facade = try await exampleDeliveryFacade(store)
        try await facade.setMembers((1...users).map { "u\($0)" }, of: "g2")
        return facade
    }

    /// A native task to every user of the app: an agora-silent text from u1.
    static func createTask(_ facade: PushFacade) async throws -> PushTask {
        let stored = NativeTask.stored(dialect: "agora-silent", sender: "u1", message: try textMessage(id: "t"))
        let now = Instant.now
        let task = PushTask(id: 1, family: NativeTask.family, audience: TaskAudience(), request: Array(stored.compactText.utf8), createdAt: now, startAt: now)
        return try await facade.createTask(task, labelNames: nil, limit: 10, windowSeconds: 300)
    }

    /// A runner of two receivers a page (`rate` receivers a second at most), writing through a writer
    /// of its own (a node's).
    static func runner(_ facade: PushFacade, _ name: String, rate: Int? = nil) -> TaskRunner {
        let writer = GroupCommitWriter(facade: facade, maxBatch: 8, maxWaitMicroseconds: 0, timeout: .seconds(60), name: "runner-\(name)")
        let tenant = AppTenant(id: "a", facade: facade, writer: writer, afterWrite: nil) { throw ServiceError.stopping }
        return TaskRunner(tenant: tenant, families: [:], settings: .init(pageSize: 2, receiversPerSecond: rate), metrics: ServiceMetrics(), logger: Logger(label: "test"))
    }
}
