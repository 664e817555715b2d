import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeStore

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
    private(set) var records: [RecordChange] = []
    /// Each record's decisions, for a repeat later in the same batch.
    private var recordDecisions: [[ReceiverDecision]] = []
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

    /// The decisions an earlier message of the batch was sent with under `id`, sent since `cutoff`.
    func decisions(of id: String, since cutoff: Instant) -> [ReceiverDecision]? {
        guard let position = recordPositions[id], records[position].sentAt >= cutoff else { return nil }
        return recordDecisions[position]
    }

    /// Adds one message's changes.
    /// - Parameters:
    ///   - badges: its counters (distinct user rows).
    ///   - deliveries: its outbox rows.
    ///   - record: its record and decisions, when it has an id.
    ///   - cutoff: records sent before it may be forgotten.
    mutating func add(badges new: [(key: UserKey, badge: Int)], deliveries: [OutboxDelivery], record: (change: RecordChange, decisions: [ReceiverDecision])?, cutoff: Instant) {
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
        if let (record, decisions) = record {
            if let position = recordPositions[record.id] {
                records[position] = record
                recordDecisions[position] = decisions
            } else {
                recordPositions[record.id] = records.count
                records.append(record)
                recordDecisions.append(decisions)
            }
        }
        self.cutoff = max(self.cutoff, cutoff)
    }

    /// The changes, as the store commits them.
    var changes: StateChanges { StateChanges(badges: badges, deliveries: deliveries, records: records, cutoff: cutoff) }
}
