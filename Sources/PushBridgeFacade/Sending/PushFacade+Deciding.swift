import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeStore

extension PushFacade {
    /// Decides a message from what was read for it, after the messages whose changes `effects`
    /// holds (it sees their counters and records as if written), and adds its own changes. Pure:
    /// it reads nothing and writes nothing; the store commits what it decided (``SendEffects/changes``).
    /// - Parameters:
    ///   - prepared: the message.
    ///   - reads: what was read for it (the keys ``plan(_:into:)`` named, found by ``reads(_:in:group:)``).
    ///   - effects: what the messages decided before it change.
    /// - Returns: the outcome (a repeated id: the first send's decisions, and no changes).
    func decide(_ prepared: PreparedMessage, reads: MessageReads, after effects: inout SendEffects) -> SendOutcome {
        let (canonical, adapter, now, profile) = (prepared.message, prepared.adapter, prepared.now, prepared.profile)
        let fresh: FreshMessageReads
        switch reads {
        case .repeated(let decisions): return SendOutcome(messageID: canonical.id, decisions: decisions, isRepeat: true)
        case .fresh(let read): fresh = read
        }
        let remembered = !canonical.id.isEmpty
        let (receivers, groupPushOff, only) = (fresh.receivers, fresh.groupPushOff, prepared.only)
        // Receivers that see the same alert share one written payload (Specification §5's bytes either way).
        var push = PreparedPush(canonical, sender: fresh.sender, profile: profile, decider: PushDecider(app: fresh.app), receivers: receivers.count)
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
            // A counter an earlier message of this batch changed is not written yet.
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
        var sent: (change: RecordChange, decisions: [ReceiverDecision])?
        if remembered {
            let bytes: RecordChange.Bytes
            if let record, record.matchesRows, let kept = receivers.roll {
                // A kept group's names and devices are stored once, for every send's record to refer to.
                bytes = .onRoll(RecordChange.OnRoll(writer: record, roll: kept, rows: receivers.allRows, skipped: receivers.skippedRow))
            } else {
                bytes = .encoded(SentMessageRecord.encode(decisions))
            }
            sent = (RecordChange(id: canonical.id, sentAt: now, count: decisions.count, bytes: bytes), decisions)
        }
        effects.add(badges: badges, deliveries: deliveries, record: sent, cutoff: repeatCutoff(at: now))
        return SendOutcome(messageID: canonical.id, decisions: decisions, isRepeat: false)
    }
}

extension PushFacade.PreparedMessage {
    /// The group of a group message.
    var group: String? { message.kind == .group ? message.groupId : nil }
}
