import Foundation
import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore

// Sending a message: prepared alone or in a batch, its outcome, and a repeat's record.
extension PushFacade {
    /// Decides a message for every receiver, and commits the pushed receivers' badge counters in
    /// the same transaction.
    ///
    /// A message id already sent within ``repeatWindowSeconds`` is not a second message: the first
    /// send's decisions come back byte for byte and no counter changes (Specification §10). An empty id is
    /// never taken for a repeat.
    ///
    /// A one-to-one message goes to its target(s); a group message to every member except the
    /// sender, in membership order. Receivers the store does not know get the dialect's defaults
    /// (so: `no-device`).
    /// - Parameters:
    ///   - message: the message in the dialect's shape.
    ///   - dialect: the dialect id.
    ///   - now: when the message is sent.
    ///   - profile: the output shape (the dialect's own by default).
    ///   - sender: the sender, when the message does not name one (or to check it against).
    ///   - pointer: where the message is in its document.
    public func send(
        _ message: JSONValue, dialect: String, now: Instant, profile: Profile? = nil, sender: UserID? = nil, pointer: JSONPointer = .root
    ) throws -> [ReceiverDecision] {
        try sendMessage(message, dialect: dialect, now: now, profile: profile, sender: sender, pointer: pointer).decisions
    }

    /// What a send did: the message id, the decisions, and whether it was a repeat.
    public struct SendOutcome: Hashable, Sendable {
        /// The message id (empty when the message has none).
        public var messageID: String
        /// One decision per receiver, in audience order.
        public var decisions: [ReceiverDecision]
        /// The id was sent before (within the repeat window): these are the first send's decisions,
        /// and nothing was counted again.
        public var isRepeat: Bool
    }

    /// ``send(_:dialect:now:profile:sender:pointer:)``, also saying whether the message was a repeat.
    public func sendMessage(
        _ message: JSONValue, dialect: String, now: Instant, profile: Profile? = nil, sender: UserID? = nil, pointer: JSONPointer = .root
    ) throws -> SendOutcome {
        try send(try prepare(message, dialect: dialect, now: now, profile: profile, sender: sender, pointer: pointer))
    }

    /// A message read and checked, ready to send: everything about it that needs no stored state.
    public struct PreparedMessage: Sendable {
        /// The message in the canonical model.
        public var message: PushMessage
        /// Who it goes to.
        public var audience: Audience
        /// The sender.
        public var sender: UserID
        /// When it is sent.
        public var now: Instant
        /// The output shape.
        public var profile: Profile
        /// A targeted group message's receivers: only these members get a decision (`nil`: all).
        public var only: Set<UserID>?
        let adapter: any DialectAdapter
    }

    /// Reads and checks a dialect message without touching the store, so that a server can do it
    /// outside its writer; `send(_:)` then decides it in one transaction.
    /// - Parameters: as ``sendMessage(_:dialect:now:profile:sender:pointer:)``.
    /// - Throws: `InputError` for bad input.
    public func prepare(
        _ message: JSONValue, dialect: String, now: Instant, profile: Profile? = nil, sender: UserID? = nil, pointer: JSONPointer = .root
    ) throws -> PreparedMessage {
        let adapter = try adapter(dialect)
        let address = try adapter.address(of: message, at: pointer)
        guard let from = sender ?? address.sender else {
            throw InputError(.missingKey, at: pointer / "from", expected: "the sender: the message's own sender field, or --sender")
        }
        try Self.checkUser(from, at: pointer / "from")
        // The canonical message does not depend on the receiver; read it once.
        let firstReceiver: UserID
        switch address.audience {
        case .users(let users):
            // The adapters check their own fields with their pointers; this holds for any adapter.
            for user in users { try Self.checkUser(user, at: pointer) }
            firstReceiver = users.first { $0 != from } ?? users[0]
        case .group(let group):
            try Self.checkGroup(group, at: pointer)
            firstReceiver = group
        }
        let canonical = try adapter.message(message, at: pointer, context: MessageContext(sender: from, receiver: firstReceiver, now: now))
        try IdentifierRule.check(canonical.id, at: pointer / "id", what: "the message id")
        if let only = address.only {
            for (i, user) in only.enumerated() { try Self.checkUser(user, at: pointer / "receiverList" / i) }
        }
        return PreparedMessage(
            message: canonical, audience: address.audience, sender: from, now: now, profile: profile ?? adapter.profile, only: address.only.map(Set.init),
            adapter: adapter)
    }

    /// Decides a prepared message for every receiver and commits the counters, in one transaction
    /// (a repeated id: the first send's decisions, nothing counted).
    /// - Parameter prepared: from ``prepare(_:dialect:now:profile:sender:pointer:)``.
    public func send(_ prepared: PreparedMessage) throws -> SendOutcome {
        do {
            return try store.write { transaction in try send([prepared], failing: [:], in: transaction)[0].get() }
        } catch let failed as FailedInBatch {
            throw failed.error
        }
    }

    /// Sends several prepared messages in one write transaction (group commit): each message is
    /// decided and counted as ``send(_:)`` does, in order, each seeing the ones before it. A message
    /// that fails leaves nothing behind and the others are kept.
    ///
    /// The messages' counters, outbox rows and records are written together once all are decided
    /// (a few statements for the batch, no savepoint per message). When one fails, the transaction
    /// is rolled back and the batch decided again without it, so that nothing of it can remain.
    /// - Parameter batch: messages from ``prepare(_:dialect:now:profile:sender:pointer:)``.
    /// - Returns: one result per message, in order.
    /// - Throws: when the commit itself fails; then none of the messages was sent.
    public func send(_ batch: [PreparedMessage]) throws -> [Result<SendOutcome, any Error>] {
        var failures: [Int: any Error] = [:]
        while true {
            do {
                return try store.write { transaction in try send(batch, failing: failures, in: transaction) }
            } catch let failed as FailedInBatch {
                failures[failed.index] = failed.error  // each round leaves one more out: at most batch.count + 1 rounds
            }
        }
    }

    /// Reads, decides and commits a batch in `transaction`: the batch's ids together, then what its new
    /// messages need in one call; each message decided in order, seeing the ones before it; the changes
    /// written together.
    /// - Parameters:
    ///   - batch: the messages.
    ///   - failures: messages that failed in an earlier round, left out with their errors.
    ///   - transaction: the write transaction.
    /// - Throws: ``FailedInBatch`` naming a message that failed (the transaction must be rolled back).
    private func send(_ batch: [PreparedMessage], failing failures: [Int: any Error], in transaction: any PushStateTransaction) throws -> [Result<SendOutcome, any Error>] {
        // Read: the batch's ids together, then what its new messages need, in one call.
        let remembered = batch.indices.filter { failures[$0] == nil && !batch[$0].message.id.isEmpty }
        var stored = [[UInt8]?](repeating: nil, count: batch.count)
        let found = try transaction.sentMessages(remembered.map { (batch[$0].message.id, repeatCutoff(at: batch[$0].now)) })
        for (i, record) in zip(remembered, found) { stored[i] = record }
        var keys = StateKeys()
        var planned = [MessageKeys?](repeating: nil, count: batch.count)
        for i in batch.indices where failures[i] == nil && stored[i] == nil { planned[i] = Self.plan(batch[i], into: &keys) }
        let snapshot = try transaction.read(keys)
        // Decide, in order, each message seeing the ones before it; then write.
        var effects = SendEffects()
        var results: [Result<SendOutcome, any Error>] = []
        results.reserveCapacity(batch.count)
        for (i, prepared) in batch.enumerated() {
            if let failure = failures[i] {
                results.append(.failure(failure))
                continue
            }
            let id = prepared.message.id
            if !id.isEmpty, let earlier = effects.decisions(of: id, since: repeatCutoff(at: prepared.now)) {
                results.append(.success(SendOutcome(messageID: id, decisions: earlier, isRepeat: true)))
                continue
            }
            do {
                let reads: MessageReads
                if let record = stored[i] {
                    reads = try Self.repeated(record, of: id, in: transaction)
                } else {
                    reads = .fresh(try Self.reads(planned[i]!, in: snapshot, group: prepared.group))
                }
                results.append(.success(decide(prepared, reads: reads, after: &effects)))
            } catch {
                throw FailedInBatch(index: i, error: error)
            }
        }
        try transaction.commit(effects.changes)
        return results
    }

    /// A message of a batch failed: the batch's transaction is rolled back and run again without it.
    fileprivate struct FailedInBatch: Error {
        let index: Int
        let error: any Error
    }

    /// The first instant of the repeat window that ends at `now`: a record sent before it is forgotten.
    func repeatCutoff(at now: Instant) -> Instant { now.adding(seconds: -repeatWindowSeconds) }

    /// The same facade (dialects, repeat window, outbox) writing through another store: a group
    /// commit's writer, given the store of its savepoint.
    /// - Parameter store: the store to read and write through.
    public func writing(to store: any PushStateStore) -> PushFacade {
        PushFacade(store: store, registry: registry, repeatWindowSeconds: repeatWindowSeconds, queuesDeliveries: queuesDeliveries)
    }

    /// The decisions a message id was sent with, as the send returned them, or `nil` when no
    /// message with this id was sent within ``repeatWindowSeconds`` before `now`.
    /// - Parameters:
    ///   - id: the message id.
    ///   - now: the instant of the question (the window ends then).
    public func sentMessage(_ id: String, now: Instant) throws -> [ReceiverDecision]? {
        guard !id.isEmpty else { return nil }
        return try store.read { transaction in
            try transaction.sentMessage(id, since: repeatCutoff(at: now)).map {
                try SentMessageRecord.decode($0, messageID: id, roll: transaction.roll)
            }
        }
    }
}
