import Foundation
import CSQLite
import PushBridgeCore
import PushBridgeJSON

// The delivery outbox: enqueue, claim, settle, release, prune, count.

extension SQLiteStateStore.Transaction {
    func enqueueDeliveries(_ deliveries: [OutboxDelivery]) throws {
        try checkWritable()
        guard !deliveries.isEmpty else { return }
        let insert = try connection.statement(
            """
            INSERT INTO deliveries (message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?8, ?8, ?8)
            """)
        for d in deliveries {
            insert.reset()
            try insert.bind(1, d.messageID).bind(2, d.receiver).bind(3, d.token).bind(4, d.environment.rawValue).bind(5, d.boundAt.milliseconds)
                .bind(6, blob: OutboxDelivery.encode(d.headers)).bind(7, blob: d.payload).bind(8, d.queuedAt.milliseconds).run()
        }
    }

    func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) throws -> [OutboxDelivery] {
        try checkWritable()
        // Each lane read on its own through the queued rows' index (lane, due_at); chat first.
        let claim = try connection.statement(
            """
            UPDATE deliveries SET claimed_until = ?1
            WHERE id IN (SELECT id FROM (
                SELECT * FROM (SELECT id, lane, due_at FROM deliveries WHERE state = 0 AND lane = 0 AND due_at <= ?2 AND claimed_until <= ?2 ORDER BY due_at, id LIMIT ?3)
                UNION ALL
                SELECT * FROM (SELECT id, lane, due_at FROM deliveries WHERE state = 0 AND lane = 1 AND due_at <= ?2 AND claimed_until <= ?2 ORDER BY due_at, id LIMIT ?4)
                ORDER BY lane, due_at, id LIMIT ?3))
            RETURNING \(ClaimedDeliveryColumn.sql)
            """)
        claim.bind(1, claimUntil.milliseconds).bind(2, now.milliseconds).bind(3, limit).bind(4, max(0, min(taskLimit, limit)))
        var out: [OutboxDelivery] = []
        while try claim.step() { out.append(try SQLiteRow(claim).claimedDelivery()) }
        out.sort { $0.id < $1.id }
        return out
    }

    func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) throws {
        try checkWritable()
        let update = try connection.statement(
            """
            UPDATE deliveries SET state = ?2, status = ?3, reason = ?4, due_at = coalesce(?5, due_at), claimed_until = 0,
                attempts = attempts + 1, updated_at = ?6, device_removed = ?7
            WHERE id = ?1 AND state = 0
            """)
        for s in settlements {
            update.reset()
            try update.bind(1, s.id).bind(2, StoredCodes.code(s.state)).bind(3, s.status).bind(4, s.reason).bind(5, s.retryAt?.milliseconds)
                .bind(6, now.milliseconds).bind(7, s.deviceRemoved ? 1 : 0).run()
        }
    }

    func releaseDeliveryClaims() throws {
        try checkWritable()
        try connection.statement("UPDATE deliveries SET claimed_until = 0 WHERE state = 0 AND claimed_until <> 0").run()
    }

    func nextDeliveryDue() throws -> Instant? {
        let row = try connection.statement("SELECT min(max(due_at, claimed_until)) FROM deliveries WHERE state = 0")
        return try row.step() ? row.optionalInt64(0).map(Instant.init(milliseconds:)) : nil
    }

    func deliveries(ofMessage id: String) throws -> [DeliveryRecord] {
        let rows = try connection.statement(
            "SELECT \(DeliveryRecordColumn.sql) FROM deliveries WHERE message_id = ? ORDER BY id")
        rows.bind(1, id)
        var out: [DeliveryRecord] = []
        while try rows.step() {
            out.append(try SQLiteRow(rows).deliveryRecord())
        }
        return out
    }

    func pruneDeliveries(settledBefore cutoff: Instant) throws -> Int {
        try checkWritable()
        try connection.statement("DELETE FROM deliveries WHERE state <> 0 AND updated_at < ?").bind(1, cutoff.milliseconds).run()
        return Int(sqlite3_changes(connection.handle))
    }

    func outboxCounts() throws -> OutboxCounts {
        try counts(try connection.statement("SELECT state, count(*) FROM deliveries GROUP BY state"))
    }

    func queuedDeliveryCount() throws -> Int {
        // The partial index of queued rows (deliveries_due) holds them alone.
        let row = try connection.statement("SELECT count(*) FROM deliveries INDEXED BY deliveries_due WHERE state = 0")
        return try row.step() ? row.int(0) : 0
    }

    /// Reads rows of `state, count(*)` into counts.
    func counts(_ rows: Statement) throws -> OutboxCounts {
        var counts = OutboxCounts(queued: 0, delivered: 0, failed: 0)
        while try rows.step() {
            switch try StoredCodes.deliveryState(rows.int(0)) {
            case .queued: counts.queued = rows.int(1)
            case .delivered: counts.delivered = rows.int(1)
            case .failed: counts.failed = rows.int(1)
            }
        }
        return counts
    }
}
