import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeStore

// The sent-message record (PushBridgeRecordCoding's codec) as the facade keeps it in a store:
// damaged bytes are a store failure, and a roll's rows are a kept group's stored receivers.

extension SentMessageRecord {
    /// Reads a record back; a record PushBridge did not write is a store failure.
    /// - Parameters:
    ///   - bytes: the record.
    ///   - messageID: its message id (for errors).
    ///   - roll: a stored roll's bytes by id, for a `PBR4` record (`nil`: no such roll).
    /// - Throws: ``StoreError`` `unexpected-value` naming the message when the bytes are damaged;
    ///   what `roll` throws.
    static func decode(_ bytes: [UInt8], messageID: String, roll: (Int64) throws -> [UInt8]? = { _ in nil }) throws -> [ReceiverDecision] {
        do {
            return try decode(bytes, roll: roll)
        } catch let damage as RecordDamage {
            throw damaged(damage, messageID: messageID)
        }
    }

    /// The store failure that damaged record bytes are.
    static func damaged(_ damage: RecordDamage, messageID: String) -> StoreError {
        StoreError(.unexpectedValue, "the sent-message record of \"\(messageID)\" is damaged: \(damage.what)", context: "sent_messages.decisions")
    }

    /// The `PBL1` bytes of a kept group's rows.
    /// - Parameter rows: every row, the sender's too.
    static func encodeRoll(_ rows: [StoredReceiver]) -> [UInt8] {
        encodeRoll(rows.map(\.state))
    }
}

extension SentMessageRecord.RollReference {
    /// A kept group's stored roll.
    /// - Parameters:
    ///   - id: the stored roll's id.
    ///   - rows: every row of the roll, the one left out too.
    ///   - skipped: the row left out (the sender), if any.
    init(id: Int64, rows: [StoredReceiver], skipped: Int?) {
        self.init(id: id, rows: rows.map(\.state), skipped: skipped)
    }
}
