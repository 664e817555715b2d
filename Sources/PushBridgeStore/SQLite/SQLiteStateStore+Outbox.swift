import Foundation
import CSQLite
import PushBridgeCore
import PushBridgeJSON

// The delivery outbox: enqueue, claim, settle, release, prune, count.

extension SQLiteStateStore {
    /// The shortest run of deliveries whose request is stored once: a shorter one (a receiver's two
    /// devices) would write a content row for what it saves.
    static let sharedRunLength = 3

    /// Rows an insert of a run's deliveries carries (the rest go one a statement).
    static let rowsAnInsert = 32
    /// The values bound for each row of ``insertDeliveries(rows:)``.
    static let valuesARow = 10

    /// The insert of one delivery, and of ``rowsAnInsert``.
    static let insertDelivery = insertDeliveries(rows: 1), insertRunOfDeliveries = insertDeliveries(rows: rowsAnInsert)

    /// An insert of `rows` deliveries, ``valuesARow`` numbered values a row: message id, receiver,
    /// token, environment, bound at, headers, payload, queued at (also its due and update times),
    /// content and badge.
    static func insertDeliveries(rows: Int) -> String {
        let values = (0..<rows).map { row in
            let n = (1...valuesARow).map { "?\(row * valuesARow + $0)" }
            return "(\(n[0]), \(n[1]), \(n[2]), \(n[3]), \(n[4]), \(n[5]), \(n[6]), \(n[7]), \(n[7]), \(n[7]), \(n[8]), \(n[9]))"
        }
        return "INSERT INTO deliveries (message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at, content, badge) VALUES "
            + values.joined(separator: ", ")
    }
}

extension SQLiteStateStore.Transaction {
    /// Queues `deliveries`; a run of at least ``SQLiteStateStore/sharedRunLength`` of them with one
    /// request (``OutboxDelivery/sharesContent(with:)``) stores it once, in `delivery_contents` (a
    /// render class's template, or the bytes), and each row refers to it with its receiver's badge.
    func enqueueDeliveries(_ deliveries: [OutboxDelivery]) throws {
        try checkWritable()
        guard !deliveries.isEmpty else { return }
        var start = deliveries.startIndex
        while start < deliveries.endIndex {
            var end = start + 1
            while end < deliveries.endIndex, deliveries[end].sharesContent(with: deliveries[start]) { end += 1 }
            let first = deliveries[start]
            let content = end - start >= SQLiteStateStore.sharedRunLength ? try storeContent(DeliveryContent(
                headers: first.headers, template: first.template?.payload ?? PayloadTemplate(bytes: first.payload, badge: nil, receiver: nil))) : nil
            let headers = content == nil ? OutboxDelivery.encode(first.headers) : []
            // Rows go in by statements of several rows each: a statement's step costs more than a row's values.
            var next = start
            while next < end {
                let rows = end - next >= SQLiteStateStore.rowsAnInsert ? SQLiteStateStore.rowsAnInsert : 1
                let insert = try connection.statement(rows == 1 ? SQLiteStateStore.insertDelivery : SQLiteStateStore.insertRunOfDeliveries)
                for (row, d) in deliveries[next..<next + rows].enumerated() {
                    let base = Int32(row * SQLiteStateStore.valuesARow)
                    insert.bind(base + 1, d.messageID).bind(base + 2, d.receiver).bind(base + 3, d.token).bind(base + 4, d.environment.rawValue)
                        .bind(base + 5, d.boundAt.milliseconds).bind(base + 6, blob: headers).bind(base + 7, blob: content == nil ? d.payload : [])
                        .bind(base + 8, d.queuedAt.milliseconds).bind(base + 9, content).bind(base + 10, content == nil ? nil : d.template?.badge)
                }
                try insert.run()
                next += rows
            }
            start = end
        }
    }

    /// Stores a request that several deliveries share; returns its id.
    private func storeContent(_ content: DeliveryContent) throws -> Int64 {
        let template = content.template
        try connection.statement(
            "INSERT INTO delivery_contents (headers, payload, badge_start, badge_end, receiver_start, receiver_end) VALUES (?, ?, ?, ?, ?, ?)"
        )
        .bind(1, blob: OutboxDelivery.encode(content.headers)).bind(2, blob: template.bytes).bind(3, template.badge?.lowerBound).bind(4, template.badge?.upperBound)
        .bind(5, template.receiver?.lowerBound).bind(6, template.receiver?.upperBound).run()
        let id = connection.lastInsertRowID
        keep(content, id: id)
        return id
    }

    /// Keeps a shared request on the connection, at most 1,024 of them (past that, those kept go).
    private func keep(_ content: DeliveryContent, id: Int64) {
        if connection.deliveryContents.count >= 1_024 { connection.deliveryContents.removeAll() }
        connection.deliveryContents[id] = content
    }

    /// The shared request `id` names, read once and kept on the connection.
    private func content(_ id: Int64) throws -> DeliveryContent {
        if let kept = connection.deliveryContents[id] { return kept }
        let row = try connection.statement(
            "SELECT headers, payload, badge_start, badge_end, receiver_start, receiver_end FROM delivery_contents WHERE id = ?"
        ).bind(1, id)
        guard try row.step() else {
            throw StoreError(.unexpectedValue, "delivery content \(id) does not exist", context: "deliveries.content")
        }
        let damaged = StoreError(.unexpectedValue, "delivery content \(id): its marks are outside its payload", context: "delivery_contents")
        func range(_ column: Int32) throws -> Range<Int>? {
            let (start, end) = (row.optionalInt64(column), row.optionalInt64(column + 1))
            if start == nil && end == nil { return nil }
            guard let start, let end, start <= end else { throw damaged }
            return Int(start)..<Int(end)
        }
        guard let template = PayloadTemplate.checked(bytes: row.bytes(1), badge: try range(2), receiver: try range(4)) else { throw damaged }
        let content = DeliveryContent(headers: try OutboxDelivery.decode(row.bytes(0)), template: template)
        row.reset()
        keep(content, id: id)
        return content
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
            RETURNING \(ClaimedDeliveryColumn.sql), content, badge
            """)
        claim.bind(1, claimUntil.milliseconds).bind(2, now.milliseconds).bind(3, limit).bind(4, max(0, min(taskLimit, limit)))
        var out: [OutboxDelivery] = []
        var shared: [(index: Int, content: Int64, badge: Int?)] = []
        let contentColumn = Int32(ClaimedDeliveryColumn.allCases.count)
        while try claim.step() {
            if let content = claim.optionalInt64(contentColumn) { shared.append((out.count, content, claim.optionalInt64(contentColumn + 1).map(Int.init))) }
            out.append(try SQLiteRow(claim).claimedDelivery())
        }
        claim.reset()  // done with the claim before the contents are read
        for (index, id, badge) in shared {
            let content = try content(id)
            out[index].headers = content.headers
            out[index].payload = try content.payload(badge: badge, receiver: out[index].receiver)
        }
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
        let pruned = Int(sqlite3_changes(connection.handle))
        // Contents are stored in id order before the rows that refer to them: one older than the
        // oldest still referred to is referred to by none.
        try connection.statement(
            """
            DELETE FROM delivery_contents WHERE id < coalesce(
                (SELECT min(content) FROM deliveries WHERE content IS NOT NULL), (SELECT max(id) + 1 FROM delivery_contents))
            """
        ).run()
        if connection.changes > 0 { connection.deliveryContents.removeAll() }
        return pruned
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
