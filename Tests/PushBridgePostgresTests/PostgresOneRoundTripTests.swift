import Dispatch
import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
@testable import PushBridgePostgres
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Synchronization
import Testing

/// A warm run of sends is decided on what the node keeps and committed in one round trip that holds
/// no thread; when the commit's check finds a change (another node wrote, the id was sent) or a send
/// reads something not kept, nothing of that decision is kept and the run is read and decided again
/// under the lock — the same outcomes as a memory store's.
@Suite("PostgreSQL one round trip a commit")
struct PostgresOneRoundTripTests {
    /// Two nodes' stores on one new schema with the example app, u1 and u2 each with a device, and
    /// group g1 of ``PostgresReceiverCacheTests/members``.
    static func twoNodes() async throws -> (a: PostgresStateStore, b: PostgresStateStore)? {
        guard let (a, b) = try await PostgresReceiverCacheTests.twoNodes() else { return nil }
        for user in ["u1", "u2"] { try await FacadeScenario.register(user, in: PushFacade(store: a)) }
        return (a, b)
    }

    /// What the service's writer does with a run of sends: one awaited update.
    static func commit(_ store: any PushStateStore, _ messages: [PushFacade.PreparedMessage]) async throws -> [PushFacade.SendOutcome] {
        try await PushFacade(store: store, queuesDeliveries: true).send(messages).map { try $0.get() }
    }

    static func prepare(_ message: JSONValue, on store: any PushStateStore) throws -> PushFacade.PreparedMessage {
        try PushFacade(store: store).prepare(message, dialect: "agora-silent", now: FacadeScenario.now)
    }

    static func counts(_ store: PostgresStateStore) -> (statements: Int, committed: Int, changed: Int, recounted: Int, missed: Int) {
        let policy = store.oneRoundTrip
        return (store.pool.statements.value, policy.committedCount.value, policy.changedCount.value, policy.recountedCount.value, policy.missedCount.value)
    }

    @Test("a warm group of sends commits in one statement; its decisions and counters are a memory store's, and later sends count on from them")
    func warmGroupInOneStatement() async throws {
        guard let (a, _) = try await Self.twoNodes() else { return }
        let memory = MemoryStateStore()
        let twin = PushFacade(store: memory)
        try await twin.configure(FacadeScenario.app)
        for user in PostgresReceiverCacheTests.members + ["u1", "u2"] { try await FacadeScenario.register(user, in: twin) }
        try await twin.setMembers(PostgresReceiverCacheTests.members, of: "g1")
        // Warm: a one-to-one send and the group's senders' sends under the lock (the node keeps the
        // senders and receivers they read; the roll is stored then).
        for store in [a, memory] as [any PushStateStore] {
            _ = try await PushFacade(store: store).send(try Self.prepare(PostgresRoundTripTests.oneToOne("warm-1"), on: store))
            for sender in ["m0", "m1", "m2"] {
                _ = try await PushFacade(store: store).send(try Self.prepare(FacadeScenario.groupMessage(from: sender, to: "g1", id: "warm-\(sender)"), on: store))
            }
        }
        let messages = (0..<6).map { PostgresRoundTripTests.oneToOne("one-\($0)") } + [
            FacadeScenario.groupMessage(from: "m1", to: "g1", id: "group-1"), FacadeScenario.groupMessage(from: "m2", to: "g1", id: "group-2"),
        ]
        let before = Self.counts(a)
        let onPostgres = try await Self.commit(a, try messages.map { try Self.prepare($0, on: a) })
        let after = Self.counts(a)
        #expect(after.statements - before.statements == 1, "one statement for eight sends: \(after.statements - before.statements)")
        #expect(after.committed - before.committed == 1 && after.changed == before.changed && after.missed == before.missed)
        let inMemory = try await Self.commit(memory, try messages.map { try Self.prepare($0, on: memory) })
        #expect(onPostgres.map(\.decisions) == inMemory.map(\.decisions) && onPostgres.count == 8)
        // The records are the same bytes' worth (a group's refers to the stored roll).
        for id in ["one-5", "group-2"] {
            #expect(try await PushFacade(store: a).sentMessage(id, now: FacadeScenario.now) == PushFacade(store: memory).sentMessage(id, now: FacadeScenario.now))
        }
        // Sends after it, under the lock and in one round trip again, count on from its counters.
        for store in [a, memory] as [any PushStateStore] {
            _ = try await PushFacade(store: store).send(try Self.prepare(FacadeScenario.groupMessage(from: "m0", to: "g1", id: "after-1"), on: store))
            _ = try await Self.commit(store, [try Self.prepare(PostgresRoundTripTests.oneToOne("after-2"), on: store)])
        }
        for user in ["u2", "m1", "m3", "m0"] {
            await #expect(try PushFacade(store: a).user(user)?.state.badge == PushFacade(store: memory).user(user)?.state.badge, "\(user)'s counter")
        }
        await #expect(try PushFacade(store: a).user("u2")?.state.badge == 1 + 6 + 1)
        await #expect(try PushFacade(store: a).user("m3")?.state.badge == 3 + 2 + 1)
        #expect(try await PushFacade(store: a).deliveries(ofMessage: "group-2").count == PushFacade(store: memory).deliveries(ofMessage: "group-2").count)
    }

    @Test("another node counted the same receiver since: the check finds its log row, writes nothing, and the group is decided again from kept data with it")
    func anotherNodesCounterIsReadOn() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        _ = try await PushFacade(store: a).send(try Self.prepare(PostgresRoundTripTests.oneToOne("a-1"), on: a))
        _ = try await PushFacade(store: b).send(try Self.prepare(PostgresRoundTripTests.oneToOne("b-1"), on: b))
        let before = Self.counts(a)
        let outcomes = try await Self.commit(a, [try Self.prepare(PostgresRoundTripTests.oneToOne("a-2"), on: a)])
        let after = Self.counts(a)
        #expect(after.recounted - before.recounted == 1 && after.committed - before.committed == 1, "the check found node B's counter; the second decision committed")
        #expect(after.statements - before.statements == 2 && after.changed == before.changed, "two round trips, no lock: \(after.statements - before.statements)")
        #expect(outcomes.count == 1 && outcomes[0].decisions.first?.decision.request?.badgeCounter == 3, "counted on from node B's send")
        await #expect(try PushFacade(store: b).user("u2")?.state.badge == 3, "a-1, b-1, a-2: nothing counted twice")
        #expect(try await PushFacade(store: b).deliveries(ofMessage: "a-2").count == 1, "one outbox row: the first run wrote nothing")
        let warm = Self.counts(a)
        _ = try await Self.commit(a, [try Self.prepare(PostgresRoundTripTests.oneToOne("a-3"), on: a)])
        #expect(Self.counts(a).statements - warm.statements == 1 && Self.counts(a).committed - warm.committed == 1)
        await #expect(try PushFacade(store: b).user("u2")?.state.badge == 4)
    }

    @Test("another node counted other receivers since: the check passes, the commit is one statement, and its answer brings those counters")
    func anotherNodesOtherCountersPass() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        let toM3 = { (id: String) in
            FacadeScenario.json(#"{"id":"\#(id)","conversationId":"m3","from":"u1","to":"m3","chatType":"Chat","body":{"type":"text","text":"hi"}}"#)
        }
        _ = try await PushFacade(store: a).send(try Self.prepare(PostgresRoundTripTests.oneToOne("a-1"), on: a))
        _ = try await PushFacade(store: a).send(try Self.prepare(toM3("a-m3-1"), on: a))
        _ = try await PushFacade(store: b).send(try Self.prepare(toM3("b-m3-1"), on: b))
        let before = Self.counts(a)
        let toU2 = try await Self.commit(a, [try Self.prepare(PostgresRoundTripTests.oneToOne("a-2"), on: a)])
        let toM3Again = try await Self.commit(a, [try Self.prepare(toM3("a-m3-2"), on: a)])
        let after = Self.counts(a)
        #expect(after.statements - before.statements == 2 && after.committed - before.committed == 2, "one statement each: \(after.statements - before.statements)")
        #expect(after.changed == before.changed && after.recounted == before.recounted && after.missed == before.missed)
        #expect(toU2.first?.decisions.first?.decision.request?.badgeCounter == 2)
        #expect(toM3Again.first?.decisions.first?.decision.request?.badgeCounter == 3, "node B's counter came with the first answer")
        // A read on node B (its snapshot at the data version it published) reads node A's rows on.
        await #expect(try PushFacade(store: b).user("m3")?.state.badge == 3)
        await #expect(try PushFacade(store: b).user("u2")?.state.badge == 2)
    }

    @Test("a message id another node sent is a repeat: the check finds its record, and the first send's decisions are answered")
    func aRepeatSentOnAnotherNode() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        _ = try await PushFacade(store: a).send(try Self.prepare(PostgresRoundTripTests.oneToOne("warm"), on: a))
        let first = try await PushFacade(store: b).send(try Self.prepare(PostgresRoundTripTests.oneToOne("same"), on: b))
        let before = Self.counts(a)
        let outcomes = try await Self.commit(a, [try Self.prepare(PostgresRoundTripTests.oneToOne("same"), on: a)])
        #expect(Self.counts(a).changed - before.changed == 1, "the record's check (after node B's counter was read on)")
        #expect(outcomes.first?.isRepeat == true && outcomes.first?.decisions == first.decisions)
        await #expect(try PushFacade(store: b).user("u2")?.state.badge == 2, "the repeat counted nothing")
    }

    @Test("a send that reads what the node does not keep (a receiver never sent to) is decided under the lock; the next one is not")
    func aMissGoesToTheLock() async throws {
        guard let (a, _) = try await Self.twoNodes() else { return }
        _ = try await PushFacade(store: a).send(try Self.prepare(PostgresRoundTripTests.oneToOne("warm"), on: a))
        let toM3 = FacadeScenario.json(#"{"id":"to-m3","conversationId":"m3","from":"u1","to":"m3","chatType":"Chat","body":{"type":"text","text":"hi"}}"#)
        let before = Self.counts(a)
        let outcomes = try await Self.commit(a, [try Self.prepare(toM3, on: a)])
        #expect(Self.counts(a).missed - before.missed == 1 && Self.counts(a).committed == before.committed)
        #expect(outcomes.first?.decisions.first?.decision.request?.badgeCounter == 1)
        let again = FacadeScenario.json(#"{"id":"to-m3-again","conversationId":"m3","from":"u1","to":"m3","chatType":"Chat","body":{"type":"text","text":"hi"}}"#)
        let warm = Self.counts(a)
        let next = try await Self.commit(a, [try Self.prepare(again, on: a)])
        #expect(Self.counts(a).statements - warm.statements == 1 && next.first?.decisions.first?.decision.request?.badgeCounter == 2)
    }

    @Test("a configuration changed on another node is seen by the check: the next group is decided with it")
    func configurationChangedElsewhere() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        _ = try await PushFacade(store: a).send(try Self.prepare(PostgresRoundTripTests.oneToOne("warm"), on: a))
        var app = try await b.reading { try await $0.app() }
        app.certificates.append(Certificate(name: "another", busiId: nil, bundleId: "io.example.other", environment: .production))
        try await b.writing { try await $0.setApp(app) }
        let before = Self.counts(a)
        let outcomes = try await Self.commit(a, [try Self.prepare(PostgresRoundTripTests.oneToOne("after"), on: a)])
        #expect(Self.counts(a).changed - before.changed == 1, "the check found the configuration's version moved")
        #expect(a.keptApp.current?.app == app, "decided under the lock with the configuration node B wrote")
        #expect(outcomes.first?.decisions.first?.decision.request?.badgeCounter == 2)
    }
}

/// A run of sends is one update: decided together on what the node keeps and committed in one call
/// of the function, or, when its check finds an id sent before, read and decided again under the lock.
@Suite("PostgreSQL runs of sends")
struct PostgresRunOfSendsTests {
    @Test("a warm run of sends commits in one call of the function, each its own decision")
    func aRunCommitsInOneCall() async throws {
        guard let (a, b) = try await PostgresOneRoundTripTests.twoNodes() else { return }
        _ = try await PushFacade(store: a).send(try PostgresOneRoundTripTests.prepare(PostgresRoundTripTests.oneToOne("warm"), on: a))
        let messages = try ["g-0", "g-1", "g-2"].map { try PostgresOneRoundTripTests.prepare(PostgresRoundTripTests.oneToOne($0), on: a) }
        let (before, calls) = (PostgresOneRoundTripTests.counts(a), a.pool.commits.commitCount.value)
        let outcomes = try await PostgresOneRoundTripTests.commit(a, messages)
        #expect(a.pool.commits.commitCount.value - calls == 1, "one call of the function for the run")
        #expect(PostgresOneRoundTripTests.counts(a).committed - before.committed == 1)
        #expect(outcomes.map { $0.decisions.first?.decision.request?.badgeCounter } == [2, 3, 4])
        await #expect(try PushFacade(store: b).user("u2")?.state.badge == 4, "another node reads what the run counted")
    }

    @Test("a target another node made since is known: a refusal on what the node keeps is decided again under the lock")
    func aRefusalIsDecidedAgainUnderTheLock() async throws {
        guard let (a, b) = try await PostgresOneRoundTripTests.twoNodes() else { return }
        func message(_ id: String) throws -> PushFacade.PreparedMessage {
            var message = try PostgresOneRoundTripTests.prepare(
                FacadeScenario.json(#"{"id":"\#(id)","conversationId":"u3","from":"u1","to":"u3","chatType":"Chat","body":{"type":"text","text":"hi"}}"#), on: a)
            message.requiredTargets = [.user("u3")]
            return message
        }
        // A run whose send to u3 is refused and whose other send commits: node A keeps u3 as unknown.
        let facade = PushFacade(store: a, queuesDeliveries: true)
        let before = try await facade.send([try message("before"), try PostgresOneRoundTripTests.prepare(PostgresRoundTripTests.oneToOne("to-u2"), on: a)])
        #expect(throws: PushFacade.UnknownTargets(targets: ["u3"])) { try before[0].get() }
        // A request's messages together (a vendor's): on what node A keeps, an unknown target would refuse them all.
        try await FacadeScenario.register("u3", in: PushFacade(store: b))
        let sent = try await facade.sendTogether([try message("after")], skippingUnknownTargets: false, sequencing: false)
        #expect(sent.sent.first?.outcome.decisions.map(\.receiver) == ["u3"], "node A reads node B's new user")
    }

    @Test("a send in the run that was sent before is a repeat: the check finds its record, and the run is decided again under the lock")
    func aRepeatInTheRunIsFound() async throws {
        guard let (a, b) = try await PostgresOneRoundTripTests.twoNodes() else { return }
        _ = try await PushFacade(store: a).send(try PostgresOneRoundTripTests.prepare(PostgresRoundTripTests.oneToOne("warm"), on: a))
        let messages = try ["h-0", "warm", "h-1"].map { try PostgresOneRoundTripTests.prepare(PostgresRoundTripTests.oneToOne($0), on: a) }
        let before = PostgresOneRoundTripTests.counts(a)
        let found = Dictionary(uniqueKeysWithValues: try await PostgresOneRoundTripTests.commit(a, messages).map { ($0.messageID, $0) })
        #expect(PostgresOneRoundTripTests.counts(a).changed - before.changed == 1, "the commit's check found the id's record")
        #expect(found["warm"]?.isRepeat == true && found["warm"]?.decisions.first?.decision.request?.badgeCounter == 1, "the first send's decision")
        #expect(found["h-0"]?.decisions.first?.decision.request?.badgeCounter == 2 && found["h-1"]?.decisions.first?.decision.request?.badgeCounter == 3)
        await #expect(try PushFacade(store: b).user("u2")?.state.badge == 3, "the repeat counted nothing")
    }
}

/// The apps of a node commit together — the one-round-trip commits that wait while a
/// statement is in flight go in the next one, each app's checked and written as it would be alone.
@Suite("PostgreSQL commits of several apps")
struct PostgresCommitCombinerTests {
    /// `count` apps' stores on one pool (a node), each with the example app, u1 and u2, warmed by one send.
    /// - Parameter combiner: how the node sends its apps' commits together.
    /// `count` apps on one node's pool, each with the example app, u1 and u2 registered and one send
    /// made: apps `app0`, `app1`, … sharing one schema's tables (as a service's apps do), or with
    /// `schemaEach`, the app of a schema of its own each.
    static func apps(_ count: Int, combiner: PostgresCommitCombiner = PostgresCommitCombiner(), schemaEach: Bool = false) async throws -> [PostgresStateStore]? {
        guard let url = testPostgresURL() else { return nil }
        let first = try freshPostgresSchema(url)
        let pool = PostgresConnections(location: first, limit: 4, logger: .init(label: "node"), runsItself: true, commits: combiner)
        var stores: [PostgresStateStore] = []
        for i in 0..<count {
            let store = try await (schemaEach
                ? PostgresStateStore.open(location: i == 0 ? first : try freshPostgresSchema(url), app: "", pool: pool)
                : PostgresStateStore.open(location: first, app: "app\(i)", pool: pool))
            let facade = PushFacade(store: store)
            try await facade.configure(FacadeScenario.app)
            for user in ["u1", "u2"] { try await FacadeScenario.register(user, in: facade) }
            _ = try await facade.send(try PostgresOneRoundTripTests.prepare(PostgresRoundTripTests.oneToOne("warm"), on: store))
            stores.append(store)
        }
        return stores
    }

    @Test("8 apps' groups at once: fewer statements than commits, every app's sends counted once")
    func eightAppsCommitTogether() async throws {
        guard let stores = try await Self.apps(8) else { return }
        let combiner = stores[0].pool.commits
        let (statements, commits) = (combiner.statementCount.value, combiner.commitCount.value)
        let outcomes = try await withThrowingTaskGroup(of: Int.self) { group in
            for (i, store) in stores.enumerated() {
                let messages = try (0..<3).map { try PostgresOneRoundTripTests.prepare(PostgresRoundTripTests.oneToOne("m\(i)-\($0)"), on: store) }
                group.addTask { try await PostgresOneRoundTripTests.commit(store, messages).count }
            }
            return try await group.reduce(0, +)
        }
        #expect(outcomes == 8 * 3)
        #expect(combiner.commitCount.value - commits == 8, "every app's group in one round trip")
        #expect(combiner.statementCount.value - statements < 8, "commits that waited went together: \(combiner.statementCount.value - statements) statements")
        for store in stores {
            await #expect(try PushFacade(store: store).user("u2")?.state.badge == 1 + 3)
            #expect(store.oneRoundTrip.committedCount.value == 1 && store.oneRoundTrip.changedCount.value == 0)
        }
    }

    /// Keeps `store`'s commit statement in flight: its write lock is held by a connection outside the
    /// node (another pool) until the returned release is called.
    static func holdWriteLock(_ store: PostgresStateStore) async throws -> @Sendable () async throws -> Void {
        let outside = PostgresConnections(location: store.location, limit: 1, logger: .init(label: "outside"), runsItself: true)
        let (released, release) = AsyncStream<Void>.makeStream()
        let (held, lockHeld) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await outside.use(schema: nil) { session in
                try await session.execute("BEGIN")
                try await session.query(store.writeLockQuery)
                lockHeld.yield()
                for await _ in released { break }
                try await session.execute("COMMIT")
            }
        }
        for await _ in held { break }
        return {
            release.yield()
            try await holder.value
        }
    }

    /// Waits (bounded) until `condition` holds.
    static func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    /// Commits one one-to-one message `id` to `store`.
    static func sendOne(_ id: String, to store: PostgresStateStore) async throws -> [PushFacade.SendOutcome] {
        try await PostgresOneRoundTripTests.commit(store, [try PostgresOneRoundTripTests.prepare(PostgresRoundTripTests.oneToOne(id), on: store)])
    }

    /// Sends a message to `stores[0]` whose statement stays in flight (its write lock held from outside
    /// the node) until the returned release is called, which also waits for that send's answer.
    /// - Returns: the combiner's statement count before it, and the release.
    static func statementHeldInFlight(_ stores: [PostgresStateStore], _ combiner: PostgresCommitCombiner) async throws
        -> (statements: Int, release: @Sendable () async throws -> Void)
    {
        let unlock = try await holdWriteLock(stores[0])
        let statements = combiner.statementCount.value
        let first = Task { try await sendOne("held", to: stores[0]) }
        try await eventually { combiner.statementCount.value == statements + 1 }
        #expect(combiner.statementCount.value == statements + 1, "the first app's statement is in flight")
        return (statements, {
            try await unlock()
            _ = try await first.value
        })
    }

    @Test("apps of one schema commit in one call: one whose check finds another node's counter writes nothing and is decided again; the others' rows stay theirs")
    func appsShareACall() async throws {
        let combiner = PostgresCommitCombiner(holdMilliseconds: 600_000)
        guard let stores = try await Self.apps(3, combiner: combiner) else { return }
        // Another node of app1 counts u2 behind this node's back: app1's next decision read a counter that moved.
        let otherNode = PostgresConnections(location: stores[1].location, limit: 1, logger: .init(label: "other"), runsItself: true)
        let elsewhere = try await PostgresStateStore.open(location: stores[1].location, app: "app1", pool: otherNode)
        #expect(try await Self.sendOne("elsewhere", to: elsewhere).count == 1)
        let (statements, commits) = (combiner.statementCount.value, combiner.commitCount.value)
        let (_, release) = try await Self.statementHeldInFlight(stores, combiner)
        // The same message id in both apps: each app's record and outbox row are its own.
        let sends = (1..<3).map { i in Task { try await stores[i].withCommitTurn { try await Self.sendOne("together", to: stores[i]) } } }
        try await Self.eventually { combiner.waitingTurns == 2 }
        try await release()
        for send in sends { #expect(try await send.value.count == 1) }
        #expect(combiner.statementCount.value - statements == 3, "the held statement, app1's and app2's call, app1 decided again alone")
        #expect(combiner.commitCount.value - commits == 4)
        #expect(stores[1].oneRoundTrip.recountedCount.value == 1 && stores[2].oneRoundTrip.recountedCount.value == 0)
        for (store, badge) in zip(stores, [2, 3, 2]) {
            await #expect(try PushFacade(store: store).user("u2")?.state.badge == badge)
        }
        for store in stores[1...] { #expect(try await store.deliveries(ofMessage: "together").count == 1, "one outbox row an app") }
        #expect(try await stores[0].deliveries(ofMessage: "together").isEmpty)
        // A repeat in each app is answered from its own record.
        for store in stores[1...] { #expect(try await Self.sendOne("together", to: store).first?.isRepeat == true) }
    }

    @Test("writers woken by one statement's end commit in the next one together, not the first to come alone")
    func writersWokenTogetherCommitTogether() async throws {
        // A hold far longer than any test's wait: were the next statement sent before all three woken
        // writers' commits came, there would be two or three statements.
        let combiner = PostgresCommitCombiner(holdMilliseconds: 600_000)
        guard let stores = try await Self.apps(4, combiner: combiner) else { return }
        let (statements, release) = try await Self.statementHeldInFlight(stores, combiner)
        let woken = (1..<4).map { i in Task { try await stores[i].withCommitTurn { try await Self.sendOne("turn", to: stores[i]) } } }
        try await Self.eventually { combiner.waitingTurns == 3 }
        #expect(combiner.waitingTurns == 3, "the three writers wait for their turn while the statement is in flight")
        try await release()
        for writer in woken { #expect(try await writer.value.count == 1) }
        #expect(combiner.statementCount.value - statements == 2, "the held statement, then one for the three woken writers")
        for store in stores { await #expect(try PushFacade(store: store).user("u2")?.state.badge == 2) }
    }

    @Test("a writer whose turn commits nothing holds the next statement no longer than its group takes")
    func aTurnWithoutACommitPassesAtOnce() async throws {
        let combiner = PostgresCommitCombiner(holdMilliseconds: 600_000)
        guard let stores = try await Self.apps(3, combiner: combiner) else { return }
        let (statements, release) = try await Self.statementHeldInFlight(stores, combiner)
        let idle = Task { await stores[1].withCommitTurn { 0 } }
        let sending = Task { try await stores[2].withCommitTurn { try await Self.sendOne("turn", to: stores[2]) } }
        try await Self.eventually { combiner.waitingTurns == 2 }
        let start = ContinuousClock.now
        try await release()
        #expect(await idle.value == 0)
        #expect(try await sending.value.count == 1)
        #expect(ContinuousClock.now - start < .seconds(300), "not held for the idle writer's commit (the hold is ten minutes)")
        #expect(combiner.statementCount.value - statements == 2)
    }

    @Test("an app whose commit PostgreSQL refuses fails alone: the others' commits in its statement are sent again and kept")
    func oneAppsErrorFailsNoOther() async throws {
        guard let stores = try await Self.apps(4, schemaEach: true) else { return }
        try await PostgresReceiverCacheTests.behindTheNodesBack(stores[2], "DROP FUNCTION pushbridge_commit_logged")
        let results = await withTaskGroup(of: (Int, Bool).self) { group in
            for (i, store) in stores.enumerated() {
                let message = try? PostgresOneRoundTripTests.prepare(PostgresRoundTripTests.oneToOne("x\(i)"), on: store)
                group.addTask { (i, (try? await PostgresOneRoundTripTests.commit(store, message.map { [$0] } ?? [])) != nil) }
            }
            var results: [Int: Bool] = [:]
            for await (i, ok) in group { results[i] = ok }
            return results
        }
        #expect(results == [0: true, 1: true, 2: false, 3: true], "only the app without the function failed")
        for (i, store) in stores.enumerated() {
            await #expect(try PushFacade(store: store).user("u2")?.state.badge == (i == 2 ? 1 : 2))
        }
    }
}
