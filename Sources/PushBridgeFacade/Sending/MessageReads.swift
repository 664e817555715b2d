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

/// Where a new message's reads are in a ``StateSnapshot``.
struct MessageKeys {
    var sender: Int
    var groupProfile: Int?
    var receivers: Int
}

extension PushFacade {
    /// Names what deciding a new message reads (the app, its sender, its group's profile and its
    /// receivers), adding it to `keys`. Pure.
    /// - Parameters:
    ///   - prepared: the message.
    ///   - keys: the keys of the batch it belongs to.
    static func plan(_ prepared: PreparedMessage, into keys: inout StateKeys) -> MessageKeys {
        let group = prepared.group
        keys.addApp()
        return MessageKeys(
            sender: keys.add(StateKeys.Sender(user: prepared.sender, group: group)),
            groupProfile: group.map { keys.addProfile(of: $0) },
            receivers: keys.add(StateKeys.Receivers(audience: prepared.audience, sender: prepared.sender, conversation: prepared.message.receiverConversation)))
    }

    /// A new message's reads, found in what the store read for its keys.
    /// - Throws: ``StoreError`` when the group's stored profile is damaged.
    static func reads(_ keys: MessageKeys, in snapshot: StateSnapshot, group: String?) throws -> FreshMessageReads {
        var groupPushOff = false
        if let position = keys.groupProfile, let group, let bytes = snapshot.groupProfiles[position] {
            groupPushOff = try !GroupProfile(decoding: bytes, group: group).offlinePush
        }
        return FreshMessageReads(
            app: snapshot.app ?? AppConfiguration(), sender: snapshot.senders[keys.sender], groupPushOff: groupPushOff, receivers: snapshot.receivers[keys.receivers])
    }
}
