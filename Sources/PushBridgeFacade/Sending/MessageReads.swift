import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeStore

/// What deciding one message reads from the store, read before it is decided: the decision itself
/// (``PushFacade/decide(_:reads:after:)``) then needs nothing else.
enum MessageReads {
    /// The id was sent within the repeat window: the first send's decisions, nothing more to read.
    case repeated([ReceiverDecision])
    /// A new message: the app, its sender and its receivers.
    case fresh(FreshMessageReads)
}

/// What a new message's decision reads.
struct FreshMessageReads {
    /// The app configuration (certificates and templates).
    var app: AppConfiguration
    /// The sender as a decision reads it (its name, and its name card in the message's group).
    var sender: UserState?
    /// A group whose offline push is off (Specification §14).
    var groupPushOff: Bool
    /// Everyone the message reaches but the sender, in audience order.
    var receivers: StoredReceivers
}

/// A message id's record as the store holds it: read already (with the message's cutoff), or not yet.
enum StoredRecord {
    case unread
    case read([UInt8]?)

    /// The record, read now when not read yet.
    func bytes(_ id: String, since cutoff: Instant, in transaction: any SentMessageTable) throws -> [UInt8]? {
        switch self {
        case .unread: return try transaction.sentMessage(id, since: cutoff)
        case .read(let bytes): return bytes
        }
    }
}

extension PushFacade {
    /// Reads what deciding a prepared message needs: its id's record (a repeat needs nothing else),
    /// else the app, the sender, the group's push switch and the receivers.
    /// - Parameters:
    ///   - prepared: the message.
    ///   - transaction: the transaction to read in.
    ///   - stored: the id's record, when already read (a batch reads them together).
    func read(for prepared: PreparedMessage, in transaction: any PushStateTransaction, stored: StoredRecord = .unread) throws -> MessageReads {
        let canonical = prepared.message
        if !canonical.id.isEmpty, let record = try stored.bytes(canonical.id, since: repeatCutoff(at: prepared.now), in: transaction) {
            return .repeated(try SentMessageRecord.decode(record, messageID: canonical.id, roll: transaction.roll))
        }
        let group = canonical.kind == .group ? canonical.groupId : nil
        let app = try transaction.app()
        let sender = try transaction.sender(prepared.sender, group: group)
        var groupPushOff = false
        if let group, let bytes = try transaction.groupProfile(of: group) {
            groupPushOff = try !GroupProfile(decoding: bytes, group: group).offlinePush
        }
        let receivers = try transaction.receivers(of: prepared.audience, excluding: prepared.sender, conversation: canonical.receiverConversation)
        return .fresh(FreshMessageReads(app: app, sender: sender, groupPushOff: groupPushOff, receivers: receivers))
    }
}
