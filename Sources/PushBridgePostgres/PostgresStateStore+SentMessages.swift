import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// Sent-message records (a repeated send's decisions) and the receiver rolls they refer to.

extension PostgresStateStore.Transaction {
    func sentMessage(_ id: String, since cutoff: Instant) async throws -> [UInt8]? {
        if let known = context.records?[id] { return known.flatMap { $0.sentAt >= cutoff.milliseconds ? $0.decisions : nil } }
        return try await rows("SELECT decisions FROM sent_messages WHERE app = \(app) AND message_id = \(id) AND sent_at >= \(cutoff.milliseconds)").first?.bytes(0)
    }

    /// One statement for the whole batch (the records are filtered by their cutoffs here).
    func sentMessages(_ ids: [(id: String, since: Instant)]) async throws -> [[UInt8]?] {
        if let known = context.records, ids.allSatisfy({ known[$0.id] != nil }) {  // read with the write lock
            return ids.map { id, cutoff in known[id]!.flatMap { $0.sentAt >= cutoff.milliseconds ? $0.decisions : nil } }
        }
        if ids.count == 1 { return [try await sentMessage(ids[0].id, since: ids[0].since)] }
        var found: [String: (sentAt: Int64, decisions: [UInt8])] = [:]
        for row in try await rows("SELECT message_id, sent_at, decisions FROM sent_messages WHERE app = \(app) AND message_id = ANY(\(ids.map(\.id))::text[])") {
            found[try row.string(0)] = (try row.int64(1), try row.bytes(2))
        }
        return ids.map { id, cutoff in found[id].flatMap { $0.sentAt >= cutoff.milliseconds ? $0.decisions : nil } }
    }

    /// A kept group's roll is stored once and its time moved on by each send that refers to it.
    func storeRoll(_ roll: ReceiverRoll, usedAt: Instant, encoded: () -> [UInt8]) async throws -> Int64 {
        try checkWritable()
        let table = context.keptData?.receivers.tables.values.first { $0.roll === roll }
        if let id = table?.rollID,
            let found = try await rows("UPDATE receiver_rolls SET used_at = greatest(used_at, \(usedAt.milliseconds)) WHERE app = \(app) AND id = \(id) RETURNING id").first
        {
            return try found.int64(0)  // else pruned since: stored again
        }
        let row = try await rows("INSERT INTO receiver_rolls (app, used_at, rows) VALUES (\(app), \(usedAt.milliseconds), \(ByteBuffer(bytes: encoded()))) RETURNING id")
        let id = try row[0].int64(0)
        table?.rollID = id
        return id
    }

    func roll(_ id: Int64) async throws -> [UInt8]? {
        try await rows("SELECT rows FROM receiver_rolls WHERE app = \(app) AND id = \(id)").first?.bytes(0)
    }
}
