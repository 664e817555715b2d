import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeStore

extension PushFacade {
    /// Decides a prepared message in `transaction`, after the messages whose effects `effects`
    /// holds (it sees their counters and records as if written), and adds its own effects.
    /// - Parameters:
    ///   - prepared: the message.
    ///   - transaction: the write transaction the effects will be written in.
    ///   - effects: what the messages decided before it in this transaction change; unchanged
    ///     when this throws.
    ///   - stored: the id's record in the store, when already read (a batch reads them together).
    /// - Returns: the outcome (a repeated id: the first send's decisions, and no effects).
    func decide(
        _ prepared: PreparedMessage, in transaction: any PushStateTransaction, after effects: inout SendEffects, stored: StoredRecord = .unread
    ) throws -> SendOutcome {
        let (canonical, adapter, from, now, profile) = (prepared.message, prepared.adapter, prepared.sender, prepared.now, prepared.profile)
        let remembered = !canonical.id.isEmpty
        let cutoff = repeatCutoff(at: now)
        if remembered, let record = try effects.record(canonical.id, since: cutoff) ?? stored.bytes(canonical.id, since: cutoff, in: transaction) {
            return SendOutcome(messageID: canonical.id, decisions: try SentMessageRecord.decode(record, messageID: canonical.id, roll: transaction.roll), isRepeat: true)
        }
        let decider = PushDecider(app: try transaction.app())
        let senderState = try transaction.sender(from, group: canonical.kind == .group ? canonical.groupId : nil)
        // A group whose offline push is off (Specification §14): what would be pushed is suppressed, last rule.
        var groupPushOff = false
        if canonical.kind == .group, let group = canonical.groupId, let bytes = try transaction.groupProfile(of: group) {
            groupPushOff = try !GroupProfile(decoding: bytes, group: group).offlinePush
        }
        let only = prepared.only
        let receivers = try transaction.receivers(of: prepared.audience, excluding: from, conversation: canonical.receiverConversation)
        // Receivers that see the same alert share one written payload (Specification §5's bytes either way).
        var push = PreparedPush(canonical, sender: senderState, profile: profile, decider: decider, receivers: receivers.count)
        var decisions: [ReceiverDecision] = []
        decisions.reserveCapacity(receivers.count)
        var badges: [(key: UserKey, badge: Int)] = []
        effects.indexBadges()
        let counted = effects.hasBadges
        // A kept group's record is written as its decisions are made, while each row is at hand;
        // its decisions are the roll's rows in order, so they are written against them (`PBR4`;
        // the writer checks each row is its decision's receiver's, else the record is `PBR3`).
        // A targeted message's decisions are not the roll's rows: its record names its receivers (`PBR3`).
        var record = remembered && receivers.roll != nil && only == nil
            ? SentMessageRecord.DecisionWriter(version4: true, capacity: receivers.count, rowTargetsAreRows: true) : nil
        // A kept group's rows are alive anyway: requests refer to their devices there, one shared
        // reference for the send (taking and later dropping each member's own list cost a cache
        // miss each on 100,000 members).
        let deviceRows = receivers.roll != nil ? receivers.deviceRows() : nil
        receivers.forEachBorrowed { receiver, stored, row in
            if let only, !only.contains(receiver.pointee.state.user) { return }  // not a receiver of a targeted message
            // A counter an earlier message of this transaction changed is not written yet.
            let key = receiver.pointee.key
            var changed: Int?
            if counted, let key { changed = effects.badge(of: key) }
            var badge = changed ?? stored
            var decision: FanOutDecision
            if receiver.pointee.isConfigured {
                decision = push.fanOutDecision(for: receiver.pointee.state, badge: badge, now: now, devicesIn: deviceRows.map { ($0, row) })
            } else {  // the dialect's defaults, with the counter an earlier message set
                let state = adapter.newUser(receiver.pointee.state.user, timeZone: receiver.pointee.state.timeZone)
                badge = changed ?? state.badge
                decision = push.fanOutDecision(for: state, badge: badge, now: now, devicesIn: nil)
            }
            if groupPushOff, case .push = decision { decision = .suppressed(.largeGroup) }
            if case .push(let request) = decision, request.badgeCounter != badge, let key {
                badges.append((key, request.badgeCounter))
            }
            let name = receiver.pointee.state.user
            decisions.append(ReceiverDecision(receiver: name, fanOut: decision))
            record?.append(decision, receiver: name, row: receiver.pointee.state)
        }
        let deliveries = queuesDeliveries ? Self.outbox(decisions, messageID: canonical.id, now: now) : []
        var sent: SentMessage?
        if remembered {
            let bytes: [UInt8]
            if let record, record.matchesRows, let kept = receivers.roll {
                // A kept group's names and devices are stored once, for every send's record to refer to.
                let rows = receivers.allRows
                let id = try transaction.storeRoll(kept, usedAt: now) { SentMessageRecord.encodeRoll(rows) }
                bytes = record.record(count: decisions.count, roll: (id, receivers.skippedRow))
            } else {
                bytes = SentMessageRecord.encode(decisions)
            }
            sent = SentMessage(id: canonical.id, sentAt: now, decisions: bytes)
        }
        effects.add(badges: badges, deliveries: deliveries, record: sent, cutoff: cutoff)
        return SendOutcome(messageID: canonical.id, decisions: decisions, isRepeat: false)
    }
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

/// What sends change in the store, collected while they are decided and written at the end: one
/// message's, or a whole batch's (a few statements for all of them). Reads in the same transaction
/// do not see these until written, so a later message of the batch asks here first.
struct SendEffects {
    /// Counters to write, one entry per user row (its latest counter).
    private(set) var badges: [(key: UserKey, badge: Int)] = []
    /// Where each user row's entry is in `badges`, for its first `indexed` entries: built only once
    /// a second message is decided (one message's receivers are distinct already).
    private var badgePositions: [UserKey: Int] = [:]
    private var indexed = 0
    private(set) var deliveries: [OutboxDelivery] = []
    private(set) var records: [SentMessage] = []
    private var recordPositions: [String: Int] = [:]
    /// The latest cutoff of the records: older ones are forgotten.
    private var cutoff = Instant(milliseconds: .min)

    /// Whether earlier messages changed counters (then ``badge(of:)`` answers for them).
    var hasBadges: Bool { !badges.isEmpty }

    /// The counter an earlier message set for a user row, if any (after ``indexBadges()``).
    func badge(of key: UserKey) -> Int? { badgePositions[key].map { badges[$0].badge } }

    /// Indexes the counters added so far, so that ``badge(of:)`` and ``add(badges:deliveries:record:cutoff:)`` find them.
    mutating func indexBadges() {
        while indexed < badges.count {
            badgePositions[badges[indexed].key] = indexed
            indexed += 1
        }
    }

    /// The record an earlier message of the batch left for an id, sent since `cutoff`.
    func record(_ id: String, since cutoff: Instant) -> [UInt8]? {
        guard let position = recordPositions[id], records[position].sentAt >= cutoff else { return nil }
        return records[position].decisions
    }

    /// Adds one message's effects.
    /// - Parameters:
    ///   - badges: its counters (distinct user rows).
    ///   - deliveries: its outbox rows.
    ///   - record: its record, when it has an id.
    ///   - cutoff: records sent before it may be forgotten.
    mutating func add(badges new: [(key: UserKey, badge: Int)], deliveries: [OutboxDelivery], record: SentMessage?, cutoff: Instant) {
        if badges.isEmpty {
            badges = new  // the first message's: no copy, no index
        } else {
            indexBadges()
            for entry in new {
                if let position = badgePositions[entry.key] {
                    badges[position].badge = entry.badge
                } else {
                    badgePositions[entry.key] = badges.count
                    badges.append(entry)
                    indexed = badges.count
                }
            }
        }
        if self.deliveries.isEmpty { self.deliveries = deliveries } else { self.deliveries += deliveries }
        if let record {
            if let position = recordPositions[record.id] {
                records[position] = record
            } else {
                recordPositions[record.id] = records.count
                records.append(record)
            }
        }
        self.cutoff = max(self.cutoff, cutoff)
    }

    /// Writes the effects: counters, outbox rows, records (in that order, as one send always has).
    func write(to transaction: any PushStateTransaction) throws {
        try transaction.writeSendEffects(badges: badges, deliveries: deliveries, records: records, forgettingBefore: cutoff)
    }
}
