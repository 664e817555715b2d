import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgePostgres
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// Several nodes on one PostgreSQL database, at the store level: what one writes the other reads,
/// concurrent sends lose no badge update, and no delivery is claimed by two nodes at once.
@Suite("PostgreSQL nodes")
struct PostgresNodesTests {
    /// Two facades ("nodes") on one new database, with the example app's users u1–u4 in group g1.
    static func twoNodes() async throws -> (PushFacade, PushFacade)? {
        guard let url = testPostgresURL() else { return nil }
        let location = try freshPostgresSchema(url)
        let a = PushFacade(store: try await PostgresStateStore.open(location: location), queuesDeliveries: true)
        let b = PushFacade(store: try await PostgresStateStore.open(location: location), queuesDeliveries: true)
        try await a.configure(FacadeScenario.app)
        for user in ["u1", "u2", "u3", "u4"] { try await FacadeScenario.register(user, in: a) }
        try await a.setMembers(["u1", "u2", "u3", "u4"], of: "g1")
        return (a, b)
    }

    @Test("Concurrent group sends on two nodes: every badge counter equals its pushes")
    func concurrentSendsLoseNoBadgeUpdate() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        let perNode = 40
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (n, node) in [a, b].enumerated() {
                group.addTask {
                    for i in 0..<perNode {
                        _ = try await node.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: "n\(n)-\(i)"), dialect: "agora-silent", now: FacadeScenario.now)
                    }
                }
            }
            try await group.waitForAll()
        }
        for user in ["u2", "u3", "u4"] {
            await #expect(try b.user(user)?.state.badge == 2 * perNode, "\(user)'s counter on node b")
            await #expect(try a.user(user)?.state.badge == 2 * perNode, "\(user)'s counter on node a")
        }
        await #expect(try a.user("u1")?.state.badge == 0, "the sender is not pushed")
    }

    @Test("Two nodes sending to one receiver as fast as they can: the badges pushed are exactly 1…n, and its counter is n")
    func oneReceiverFromTwoNodes() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        let perNode = 60
        let badges = try await withThrowingTaskGroup(of: [Int].self) { group in
            for (n, node) in [a, b].enumerated() {
                group.addTask {
                    var pushed: [Int] = []
                    for i in 0..<perNode {
                        let decisions = try await node.send(PostgresRoundTripTests.oneToOne("r\(n)-\(i)"), dialect: "agora-silent", now: FacadeScenario.now)
                        pushed += decisions.compactMap { $0.decision.request?.badgeCounter }
                    }
                    return pushed
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(badges.sorted() == Array(1...(2 * perNode)), "no badge twice, none skipped")
        await #expect(try a.user("u2")?.state.badge == 2 * perNode)
        await #expect(try b.user("u2")?.state.badge == 2 * perNode)
    }

    @Test("One message id sent to both nodes at once is decided once and answered alike by both")
    func oneIDOnTwoNodes() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        let ids = (0..<30).map { "same-\($0)" }
        for id in ids {
            async let first = a.send(PostgresRoundTripTests.oneToOne(id), dialect: "agora-silent", now: FacadeScenario.now)
            async let second = b.send(PostgresRoundTripTests.oneToOne(id), dialect: "agora-silent", now: FacadeScenario.now)
            let (one, other) = try await (first, second)
            #expect(one == other, "\(id): both nodes answer the one decision")
            #expect(try await a.deliveries(ofMessage: id).count == 1, "\(id): pushed once")
        }
        await #expect(try a.user("u2")?.state.badge == ids.count, "each id counted once")
    }

    /// The deliveries each node claimed, claiming at once until a claim comes back empty.
    /// - Parameters:
    ///   - nodes: the nodes claiming.
    ///   - now: the instant of every claim.
    ///   - claimUntil: the claims' lease.
    ///   - limit: a claim's limit.
    ///   - taskLimit: at most this many of a claim a push task's (`nil`: the facade's default).
    static func claimAll(from nodes: [PushFacade], now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int? = nil) async throws -> [[OutboxDelivery]] {
        try await withThrowingTaskGroup(of: [OutboxDelivery].self) { group in
            for node in nodes {
                group.addTask {
                    var claimed: [OutboxDelivery] = []
                    while true {
                        let batch = try await node.claimDeliveries(now: now, claimUntil: claimUntil, limit: limit, taskLimit: taskLimit)
                        if batch.isEmpty { return claimed }
                        claimed += batch
                    }
                }
            }
            var all: [[OutboxDelivery]] = []
            for try await claimed in group { all.append(claimed) }
            return all
        }
    }

    @Test("Two nodes claiming deliveries at once never claim the same one")
    func claimsAreExclusive() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        for i in 0..<50 { _ = try await a.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: "c\(i)"), dialect: "agora-silent", now: FacadeScenario.now) }
        let now = Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let claimed = try await Self.claimAll(from: [a, b], now: now, claimUntil: now.adding(seconds: 60), limit: 7)
        let ids = claimed.flatMap { $0.map(\.id) }
        #expect(ids.count == 150, "50 messages × 3 receivers, each claimed once")
        #expect(Set(ids).count == ids.count, "no delivery claimed by both nodes")
        // A lapsed lease is claimable again (a node that died): here, after the claims end.
        let later = now.adding(seconds: 61)
        #expect(try await b.claimDeliveries(now: later, claimUntil: later.adding(seconds: 60), limit: 500).count == 150)
    }

    @Test("A member change on node A is seen by the next send on node B")
    func membersChangeAcrossNodes() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        let before = try await b.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: "x1"), dialect: "agora-silent", now: FacadeScenario.now)
        #expect(before.map(\.receiver) == ["u2", "u3", "u4"])
        try await a.setMembers(["u1", "u3"], of: "g1")
        let after = try await b.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: "x2"), dialect: "agora-silent", now: FacadeScenario.now)
        #expect(after.map(\.receiver) == ["u3"])
    }
}
