import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// The delivery outbox: claim, settle, release, prune, count (enqueued with a send's effects, +SendEffects).
// Each is one statement (``OutboxStatement``), run inside a transaction's session or, awaited, on a
// connection of its own (``PostgresStateStore/outbox``): a claim skips rows other nodes hold
// locked and needs no app lock, so a node's delivery worker holds no thread and never waits for sends.

extension PostgresStateStore {
    /// A claim cursor for push tasks' deliveries (lane 1): a push task queues its deliveries in id
    /// order, so a claim takes the next ones after the app's cursor and moves the cursor past them,
    /// writing no delivery row (ruling 198). Until a settlement a row has one version, and no claim
    /// steps over the entries that earlier claims and settlements left in the queued rows' index.
    /// A task's delivery is in one of two indexes while queued: `deliveries_fresh_tasks` (lane 1,
    /// never attempted: what the cursor walks), or `deliveries_due` with the chat pushes (lane 0,
    /// and lane 1 attempted before and due again).
    static let taskClaimCursor = Migration(
        identifier: "2026-12-07-task-claim-cursor",
        sql: """
            CREATE TABLE delivery_cursors (
                app integer PRIMARY KEY,
                next_id bigint NOT NULL DEFAULT 0,
                claimed_until bigint NOT NULL DEFAULT 0
            );
            INSERT INTO delivery_cursors (app) SELECT key FROM apps;
            DROP INDEX deliveries_due;
            CREATE INDEX deliveries_due ON deliveries (app, lane, due_at) WHERE state = 0 AND (lane = 0 OR attempts > 0);
            CREATE INDEX deliveries_fresh_tasks ON deliveries (app, id) WHERE state = 0 AND lane = 1 AND attempts = 0;
            """)
}

/// The outbox's statements, the same whether a transaction or the awaited outbox runs them.
enum OutboxStatement {
    /// Claims due deliveries, lane 0 (chat) before lane 1 (push tasks), at most `taskLimit` of lane 1.
    ///
    /// Chat pushes, and push tasks' deliveries due again after an attempt, are claimed by writing
    /// `claimed_until`; rows another node holds locked are skipped, not waited for (each lane its own
    /// `SKIP LOCKED` read, since PostgreSQL refuses `FOR UPDATE` under `UNION`; a lane-1 row the
    /// outer limit leaves out is locked only until the statement ends). Push tasks' deliveries not
    /// yet attempted are claimed by the app's cursor (``PostgresStateStore/taskClaimCursor``): the
    /// rows after it, in id order (due when queued: one queued by a node whose clock runs ahead is not
    /// passed over), and the cursor moves past the last one taken and holds them until
    /// `claimUntil` (the cursor's row lock orders two nodes' claims; it is taken only when there are
    /// deliveries after the cursor, so claims of an app without a task's deliveries never wait for each
    /// other). Rows before the cursor that are still queued and never attempted were claimed by a node
    /// that has not settled them: they are claimed again (the old way, writing `claimed_until`) only once
    /// the cursor's claims have all lapsed, as a node that died leaves them (the cursor as the statement's
    /// snapshot saw it: one moved meanwhile only left fewer rows behind it).
    static func claim(app: Int32, dueBy now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) -> PostgresQuery {
        let now = now.milliseconds
        let tasks = max(0, min(taskLimit, limit))
        let chat = """
            SELECT id, lane, due_at FROM deliveries WHERE app = \(app) AND state = 0 AND lane = 0 AND due_at <= \(now) AND claimed_until <= \(now)
            ORDER BY due_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
            """
        guard tasks > 0 else {
            return """
                UPDATE deliveries SET claimed_until = \(claimUntil.milliseconds)
                WHERE app = \(app) AND id IN (SELECT id FROM (\(unescaped: chat)) due)
                RETURNING \(unescaped: ClaimedDeliveryColumn.sql)
                """
        }
        return """
            WITH chat AS (\(unescaped: chat)),
            cursor AS (
                SELECT next_id FROM delivery_cursors c WHERE app = \(app)
                    AND EXISTS (SELECT 1 FROM deliveries WHERE app = \(app) AND state = 0 AND lane = 1 AND attempts = 0 AND id > c.next_id)
                FOR UPDATE),
            lease AS (SELECT next_id, claimed_until FROM delivery_cursors WHERE app = \(app)),
            again AS (
                SELECT id, lane, due_at FROM deliveries WHERE app = \(app) AND state = 0 AND lane = 1 AND attempts > 0 AND due_at <= \(now) AND claimed_until <= \(now)
                ORDER BY due_at, id LIMIT \(tasks) FOR UPDATE SKIP LOCKED),
            lapsed AS (
                SELECT id, lane, due_at FROM deliveries WHERE app = \(app) AND state = 0 AND lane = 1 AND attempts = 0 AND id <= (SELECT next_id FROM lease)
                    AND (SELECT claimed_until FROM lease) <= \(now) AND due_at <= \(now) AND claimed_until <= \(now)
                ORDER BY id LIMIT \(tasks) FOR UPDATE SKIP LOCKED),
            taken AS (
                SELECT id, lane FROM (SELECT * FROM chat UNION ALL (SELECT * FROM again UNION ALL SELECT * FROM lapsed ORDER BY due_at, id LIMIT \(tasks))) due
                ORDER BY lane, due_at, id LIMIT \(limit)),
            claimed AS (
                UPDATE deliveries SET claimed_until = \(claimUntil.milliseconds) WHERE app = \(app) AND id IN (SELECT id FROM taken)
                RETURNING \(unescaped: ClaimedDeliveryColumn.sql)),
            fresh AS (
                SELECT \(unescaped: ClaimedDeliveryColumn.sql) FROM deliveries
                WHERE app = \(app) AND state = 0 AND lane = 1 AND attempts = 0 AND id > (SELECT next_id FROM cursor) AND claimed_until <= \(now)
                ORDER BY id LIMIT (SELECT greatest(0, least(\(tasks) - count(*) FILTER (WHERE lane = 1), \(limit) - count(*))) FROM taken)),
            moved AS (
                UPDATE delivery_cursors c SET next_id = f.last, claimed_until = greatest(c.claimed_until, \(claimUntil.milliseconds))
                FROM (SELECT max(id) AS last FROM fresh) f WHERE c.app = \(app) AND f.last IS NOT NULL)
            SELECT * FROM claimed UNION ALL SELECT * FROM fresh
            """
    }

    /// The claimed deliveries of `rows`, in id order.
    static func claimed(_ rows: [Cells]) throws -> [OutboxDelivery] {
        try rows.map { try $0.claimedDelivery() }.sorted { $0.id < $1.id }
    }

    /// Records attempts of still-queued deliveries (`nil`: none to record). Queued is written `state < 1`
    /// (states are 0, 1 and 2), which the queued rows' partial index (`state = 0`) cannot serve: the rows
    /// are found by their key however out of date the planner's count of queued rows is (ruling 194).
    static func settle(app: Int32, _ settlements: [DeliverySettlement], at now: Instant) -> PostgresQuery? {
        guard !settlements.isEmpty else { return nil }
        return """
            UPDATE deliveries d SET state = x.s, status = nullif(x.st, -1), reason = CASE WHEN x.hr THEN x.r END,
                due_at = coalesce(nullif(x.due, -1), d.due_at), claimed_until = 0,
                attempts = d.attempts + 1, updated_at = \(now.milliseconds), device_removed = x.removed
            FROM unnest(\(settlements.map(\.id))::bigint[], \(settlements.map { Int64(StoredCodes.code($0.state)) })::bigint[],
                \(settlements.map { Int64($0.status ?? -1) })::bigint[], \(settlements.map { $0.reason ?? "" })::text[],
                \(settlements.map { $0.reason != nil })::boolean[], \(settlements.map { $0.retryAt?.milliseconds ?? -1 })::bigint[],
                \(settlements.map(\.deviceRemoved))::boolean[])
                AS x(id, s, st, r, hr, due, removed)
            WHERE d.app = \(app) AND d.id = x.id AND d.state < 1
            """
    }

    /// Forgets settled deliveries last changed before `cutoff`; answers how many.
    static func prune(app: Int32, settledBefore cutoff: Instant) -> PostgresQuery {
        "WITH gone AS (DELETE FROM deliveries WHERE app = \(app) AND state <> 0 AND updated_at < \(cutoff.milliseconds) RETURNING 1) SELECT count(*) FROM gone"
    }

    /// The count of each state.
    static func counts(app: Int32) -> PostgresQuery { "SELECT state, count(*) FROM deliveries WHERE app = \(app) GROUP BY state" }

    /// The queued count and when the next queued delivery is due, in one statement (one snapshot).
    static func state(app: Int32) -> PostgresQuery { "SELECT sum(n)::bigint, min(due) FROM (\(unescaped: queued(app: app))) parts" }

    /// The count of queued deliveries and the earliest instant one is free (due and not claimed), in
    /// two rows: one for each index a queued row is in. A push task's delivery the cursor holds is
    /// free when the cursor's claims lapse.
    private static func queued(app: Int32) -> String {
        """
        SELECT count(*) AS n, min(greatest(due_at, claimed_until)) AS due FROM deliveries WHERE app = \(app) AND state = 0 AND (lane = 0 OR attempts > 0)
        UNION ALL
        SELECT count(*), min(greatest(d.due_at, d.claimed_until, CASE WHEN d.id <= c.next_id THEN c.claimed_until ELSE 0 END))
        FROM deliveries d LEFT JOIN delivery_cursors c ON c.app = \(app) WHERE d.app = \(app) AND d.state = 0 AND d.lane = 1 AND d.attempts = 0
        """
    }

    /// Lets every claim of the app's queued deliveries go, the cursor's included.
    static func release(app: Int32) -> PostgresQuery {
        """
        WITH cursor AS (UPDATE delivery_cursors SET claimed_until = 0 WHERE app = \(app))
        UPDATE deliveries SET claimed_until = 0 WHERE app = \(app) AND state = 0 AND claimed_until <> 0
        """
    }

    /// The queued count and next due of ``state(app:)``'s row.
    static func look(_ rows: [Cells]) throws -> (queued: Int, nextDue: Instant?) {
        guard let row = rows.first else { return (0, nil) }
        return (try row.int(0), try row.optionalInt64(1).map(Instant.init(milliseconds:)))
    }

    /// The counts of rows of a state and its count (``counts(app:)``'s, or a push task's).
    static func counts(_ rows: [Cells]) throws -> OutboxCounts {
        var counts = OutboxCounts(queued: 0, delivered: 0, failed: 0)
        for row in rows {
            switch try StoredCodes.deliveryState(try row.int(0)) {
            case .queued: counts.queued = try row.int(1)
            case .delivered: counts.delivered = try row.int(1)
            case .failed: counts.failed = try row.int(1)
            }
        }
        return counts
    }
}

extension PostgresStateStore.Transaction {
    func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) async throws -> [OutboxDelivery] {
        try checkWritable()
        return try await OutboxStatement.claimed(try rows(OutboxStatement.claim(app: app, dueBy: now, claimUntil: claimUntil, limit: limit, taskLimit: taskLimit)))
    }

    func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) async throws {
        try checkWritable()
        if let statement = OutboxStatement.settle(app: app, settlements, at: now) { try await session.query(statement) }
    }

    func releaseDeliveryClaims() async throws {
        try checkWritable()
        try await session.query(OutboxStatement.release(app: app))
    }

    func nextDeliveryDue() async throws -> Instant? {
        try await OutboxStatement.look(try rows(OutboxStatement.state(app: app))).nextDue
    }

    func deliveries(ofMessage id: String) async throws -> [DeliveryRecord] {
        try await rows(
            "SELECT \(unescaped: DeliveryRecordColumn.sql) FROM deliveries WHERE app = \(app) AND message_id = \(id) ORDER BY id"
        ).map { try $0.deliveryRecord() }
    }

    func pruneDeliveries(settledBefore cutoff: Instant) async throws -> Int {
        try checkWritable()
        return try await rows(OutboxStatement.prune(app: app, settledBefore: cutoff)).first?.int(0) ?? 0
    }

    func outboxCounts() async throws -> OutboxCounts {
        try await OutboxStatement.counts(try rows(OutboxStatement.counts(app: app)))
    }
}

extension PostgresStateStore: PushOutbox {
    /// The outbox's statements, each awaited on a connection of its own (no transaction, no write lock).
    public var outbox: any PushOutbox { self }

    public func releaseDeliveryClaims() async throws {
        _ = try await rows(OutboxStatement.release(app: app))
    }

    public func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) async throws -> [OutboxDelivery] {
        try OutboxStatement.claimed(try await rows(OutboxStatement.claim(app: app, dueBy: now, claimUntil: claimUntil, limit: limit, taskLimit: taskLimit)))
    }

    public func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) async throws {
        guard let statement = OutboxStatement.settle(app: app, settlements, at: now) else { return }
        _ = try await rows(statement)
    }

    public func pruneDeliveries(settledBefore cutoff: Instant) async throws -> Int {
        try await rows(OutboxStatement.prune(app: app, settledBefore: cutoff)).first?.int(0) ?? 0
    }

    public func outboxState() async throws -> (queued: Int, nextDue: Instant?) {
        try OutboxStatement.look(try await rows(OutboxStatement.state(app: app)))
    }

    public func outboxCounts() async throws -> OutboxCounts {
        try OutboxStatement.counts(try await rows(OutboxStatement.counts(app: app)))
    }

    /// One statement on the shared tables' schema, awaited.
    private func rows(_ query: PostgresQuery) async throws -> [Cells] {
        try await pool.use(schema: schema) { session in try await session.query(query) }.map(Cells.init)
    }
}
