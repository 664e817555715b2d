import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// The delivery outbox: claim, settle, release, prune, count (enqueued with a send's effects, +SendEffects).

extension PostgresStateStore.Transaction {
    /// Claims due deliveries; rows another node holds locked are skipped, not waited for.
    func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int) throws -> [OutboxDelivery] {
        try checkWritable()
        let claimed = try rows(
            """
            UPDATE deliveries SET claimed_until = \(claimUntil.milliseconds)
            WHERE id IN (
                SELECT id FROM deliveries WHERE state = 0 AND due_at <= \(now.milliseconds) AND claimed_until <= \(now.milliseconds)
                ORDER BY due_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: ClaimedDeliveryColumn.sql)
            """)
        var out = try claimed.map { try $0.claimedDelivery() }
        out.sort { $0.id < $1.id }
        return out
    }

    func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) throws {
        try checkWritable()
        guard !settlements.isEmpty else { return }
        try session.query(
            """
            UPDATE deliveries d SET state = x.s, status = nullif(x.st, -1), reason = CASE WHEN x.hr THEN x.r END,
                due_at = coalesce(nullif(x.due, -1), d.due_at), claimed_until = 0,
                attempts = d.attempts + 1, updated_at = \(now.milliseconds), device_removed = x.removed
            FROM unnest(\(settlements.map(\.id))::bigint[], \(settlements.map { Int64(StoredCodes.code($0.state)) })::bigint[],
                \(settlements.map { Int64($0.status ?? -1) })::bigint[], \(settlements.map { $0.reason ?? "" })::text[],
                \(settlements.map { $0.reason != nil })::boolean[], \(settlements.map { $0.retryAt?.milliseconds ?? -1 })::bigint[],
                \(settlements.map(\.deviceRemoved))::boolean[])
                AS x(id, s, st, r, hr, due, removed)
            WHERE d.id = x.id AND d.state = 0
            """)
    }

    func releaseDeliveryClaims() throws {
        try checkWritable()
        try session.query("UPDATE deliveries SET claimed_until = 0 WHERE state = 0 AND claimed_until <> 0")
    }

    func nextDeliveryDue() throws -> Instant? {
        guard let row = try rows("SELECT min(greatest(due_at, claimed_until)) FROM deliveries WHERE state = 0").first else { return nil }
        return try row.optionalInt64(0).map(Instant.init(milliseconds:))
    }

    func deliveries(ofMessage id: String) throws -> [DeliveryRecord] {
        try rows(
            "SELECT \(unescaped: DeliveryRecordColumn.sql) FROM deliveries WHERE message_id = \(id) ORDER BY id"
        ).map { try $0.deliveryRecord() }
    }

    func pruneDeliveries(settledBefore cutoff: Instant) throws -> Int {
        try checkWritable()
        return try rows("WITH gone AS (DELETE FROM deliveries WHERE state <> 0 AND updated_at < \(cutoff.milliseconds) RETURNING 1) SELECT count(*) FROM gone")
            .first?.int(0) ?? 0
    }

    func outboxCounts() throws -> OutboxCounts {
        var counts = OutboxCounts(queued: 0, delivered: 0, failed: 0)
        for row in try rows("SELECT state, count(*) FROM deliveries GROUP BY state") {
            switch try StoredCodes.deliveryState(try row.int(0)) {
            case .queued: counts.queued = try row.int(1)
            case .delivered: counts.delivered = try row.int(1)
            case .failed: counts.failed = try row.int(1)
            }
        }
        return counts
    }
}
