import Foundation
import CSQLite
import PushBridgeCore
import PushBridgeJSON

// Sent-message records (a repeated send's decisions) and the receiver rolls they refer to.

extension SQLiteStateStore.Transaction {
    func sentMessage(_ id: String, since cutoff: Instant) throws -> [UInt8]? {
        let row = try connection.statement("SELECT decisions FROM sent_messages WHERE message_id = ? AND sent_at >= ?")
        row.bind(1, id).bind(2, cutoff.milliseconds)
        return try row.step() ? row.bytes(0) : nil
    }

    func storeRoll(_ roll: ReceiverRoll, usedAt: Instant, encoded: () -> [UInt8]) throws -> Int64 {
        try checkWritable()
        let table = connection.receivers.tables.values.first { $0.roll === roll }
        if let id = table?.rollID {
            try connection.statement("UPDATE receiver_rolls SET used_at = max(used_at, ?) WHERE id = ?").bind(1, usedAt.milliseconds).bind(2, id).run()
            if connection.changes == 1 { return id }  // else pruned since: stored again
        }
        try connection.statement("INSERT INTO receiver_rolls (used_at) VALUES (?)").bind(1, usedAt.milliseconds).run()
        let id = connection.lastInsertRowID
        try connection.statement("INSERT INTO receiver_roll_rows (roll_id, rows) VALUES (?, ?)").bind(1, id).bind(2, blob: encoded()).run()
        table?.rollID = id
        return id
    }

    func roll(_ id: Int64) throws -> [UInt8]? {
        let row = try connection.statement("SELECT rows FROM receiver_roll_rows WHERE roll_id = ?")
        row.bind(1, id)
        return try row.step() ? row.bytes(0) : nil
    }

    /// Ids per query of ``sentMessages(_:)`` (a shorter list repeats its first id).
    static let sentMessagesPerQuery = 16
    static let selectSentMessages =
        "SELECT message_id, sent_at, decisions FROM sent_messages WHERE message_id IN ("
        + Array(repeating: "?", count: sentMessagesPerQuery).joined(separator: ", ") + ")"

    func sentMessages(_ ids: [(id: String, since: Instant)]) throws -> [[UInt8]?] {
        var found: [String: (sentAt: Int64, decisions: [UInt8])] = [:]
        let many = Self.sentMessagesPerQuery
        var start = 0
        while start < ids.count {
            let chunk = ids[start..<min(start + many, ids.count)]
            let rows = try connection.statement(Self.selectSentMessages)
            for i in 0..<many { rows.bind(Int32(i + 1), chunk[start + min(i, chunk.count - 1)].id) }
            while try rows.step() { found[rows.string(0)] = (rows.int64(1), rows.bytes(2)) }
            start += many
        }
        return ids.map { id, cutoff in found[id].flatMap { $0.sentAt >= cutoff.milliseconds ? $0.decisions : nil } }
    }

    func recordSentMessage(_ id: String, at instant: Instant, decisions: [UInt8], forgettingBefore cutoff: Instant) throws {
        try recordSentMessages([SentMessage(id: id, sentAt: instant, decisions: decisions)], forgettingBefore: cutoff)
    }

    /// Rows per multi-row INSERT (3 parameters each); the rest go one by one.
    static let sentMessagesPerInsert = 16
    static let insertSentMessages = "INSERT OR REPLACE INTO sent_messages (message_id, sent_at, decisions) VALUES "
    static let insertManySentMessages = insertSentMessages + Array(repeating: "(?, ?, ?)", count: sentMessagesPerInsert).joined(separator: ", ")
    static let insertOneSentMessage = insertSentMessages + "(?, ?, ?)"

    func recordSentMessages(_ messages: [SentMessage], forgettingBefore cutoff: Instant) throws {
        try checkWritable()
        // Reads skip records older than their cutoff, so pruning is only for space: at most once
        // per second of message time on this connection, not once per message.
        if cutoff.milliseconds >= connection.sentMessagesPrunedBefore &+ 1_000 {
            try connection.statement("DELETE FROM sent_messages WHERE sent_at < ?").bind(1, cutoff.milliseconds).run()
            // Each roll's time is its latest record's: the rolls of the records just forgotten.
            try connection.statement("DELETE FROM receiver_roll_rows WHERE roll_id IN (SELECT id FROM receiver_rolls WHERE used_at < ?)")
                .bind(1, cutoff.milliseconds).run()
            try connection.statement("DELETE FROM receiver_rolls WHERE used_at < ?").bind(1, cutoff.milliseconds).run()
            connection.sentMessagesPrunedBefore = cutoff.milliseconds
        }
        // Rows go in order, so a later record with the same id replaces an earlier one.
        let many = Self.sentMessagesPerInsert
        var start = 0
        if messages.count >= many {
            let insert = try connection.statement(Self.insertManySentMessages)
            while messages.count - start >= many {
                insert.reset()
                for (i, message) in messages[start..<start + many].enumerated() {
                    insert.bind(Int32(3 * i + 1), message.id).bind(Int32(3 * i + 2), message.sentAt.milliseconds).bind(Int32(3 * i + 3), blob: message.decisions)
                }
                try insert.run()
                start += many
            }
        }
        for message in messages[start...] {
            try connection.statement(Self.insertOneSentMessage).bind(1, message.id).bind(2, message.sentAt.milliseconds).bind(3, blob: message.decisions).run()
        }
    }
}
