import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// Sent-message records (a repeated send's decisions).

extension PostgresStateStore.Transaction {
    func sentMessage(_ id: String, since cutoff: Instant) throws -> [UInt8]? {
        try rows("SELECT decisions FROM sent_messages WHERE message_id = \(id) AND sent_at >= \(cutoff.milliseconds)").first?.bytes(0)
    }

    func recordSentMessage(_ id: String, at instant: Instant, decisions: [UInt8], forgettingBefore cutoff: Instant) throws {
        try checkWritable()
        try session.query("DELETE FROM sent_messages WHERE sent_at < \(cutoff.milliseconds)")
        try session.query(
            """
            INSERT INTO sent_messages (message_id, sent_at, decisions) VALUES (\(id), \(instant.milliseconds), \(ByteBuffer(bytes: decisions)))
            ON CONFLICT (message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions
            """)
    }
}
