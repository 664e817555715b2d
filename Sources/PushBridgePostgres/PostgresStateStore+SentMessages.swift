import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// Sent-message records (a repeated send's decisions) and the receiver rolls they refer to.

extension PostgresStateStore.Transaction {
    func sentMessage(_ id: String, since cutoff: Instant) throws -> [UInt8]? {
        try rows("SELECT decisions FROM sent_messages WHERE message_id = \(id) AND sent_at >= \(cutoff.milliseconds)").first?.bytes(0)
    }

    /// One statement for the whole batch (the records are filtered by their cutoffs here).
    func sentMessages(_ ids: [(id: String, since: Instant)]) throws -> [[UInt8]?] {
        guard ids.count > 1 else { return try ids.map { try sentMessage($0.id, since: $0.since) } }
        var found: [String: (sentAt: Int64, decisions: [UInt8])] = [:]
        for row in try rows("SELECT message_id, sent_at, decisions FROM sent_messages WHERE message_id = ANY(\(ids.map(\.id))::text[])") {
            found[try row.string(0)] = (try row.int64(1), try row.bytes(2))
        }
        return ids.map { id, cutoff in found[id].flatMap { $0.sentAt >= cutoff.milliseconds ? $0.decisions : nil } }
    }

    /// A kept group's roll is stored once and its time moved on by each send that refers to it.
    func storeRoll(_ roll: ReceiverRoll, usedAt: Instant, encoded: () -> [UInt8]) throws -> Int64 {
        try checkWritable()
        let table = context.keptData?.receivers.tables.values.first { $0.roll === roll }
        if let id = table?.rollID,
            let found = try rows("UPDATE receiver_rolls SET used_at = greatest(used_at, \(usedAt.milliseconds)) WHERE id = \(id) RETURNING id").first
        {
            return try found.int64(0)  // else pruned since: stored again
        }
        let row = try rows("INSERT INTO receiver_rolls (used_at, rows) VALUES (\(usedAt.milliseconds), \(ByteBuffer(bytes: encoded()))) RETURNING id")
        let id = try row[0].int64(0)
        table?.rollID = id
        return id
    }

    func roll(_ id: Int64) throws -> [UInt8]? {
        try rows("SELECT rows FROM receiver_rolls WHERE id = \(id)").first?.bytes(0)
    }

    func recordSentMessage(_ id: String, at instant: Instant, decisions: [UInt8], forgettingBefore cutoff: Instant) throws {
        try recordSentMessages([SentMessage(id: id, sentAt: instant, decisions: decisions)], forgettingBefore: cutoff)
    }

    /// One statement for the records (arrays unnested), and the pruning at most once per second of
    /// message time per store on this node: reads skip records older than their cutoff, so pruning
    /// is only for space (as SQLite's store does).
    func recordSentMessages(_ messages: [SentMessage], forgettingBefore cutoff: Instant) throws {
        try checkWritable()
        let writer = context.holdsWriteLock ? context.store : nil  // its pruning time is kept under the write lock
        if cutoff.milliseconds >= (writer?.sentMessagesPrunedBefore ?? .min) &+ 1_000 {
            // Each roll's time is its latest record's: the rolls of the records just forgotten go too.
            try session.query(
                "WITH rolls AS (DELETE FROM receiver_rolls WHERE used_at < \(cutoff.milliseconds)) DELETE FROM sent_messages WHERE sent_at < \(cutoff.milliseconds)")
            writer?.sentMessagesPrunedBefore = cutoff.milliseconds
        }
        guard !messages.isEmpty else { return }
        // A later record with the same id replaces an earlier one (one row may change once per statement).
        var last: [String: Int] = [:]
        for (i, message) in messages.enumerated() { last[message.id] = i }
        let kept = messages.indices.filter { last[messages[$0].id] == $0 }.map { messages[$0] }
        try session.query(
            """
            INSERT INTO sent_messages (message_id, sent_at, decisions)
            SELECT * FROM unnest(\(kept.map(\.id))::text[], \(kept.map(\.sentAt.milliseconds))::bigint[], \(kept.map { ByteBuffer(bytes: $0.decisions) })::bytea[])
            ON CONFLICT (message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions
            """)
    }
}
