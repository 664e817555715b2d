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
    ) async throws -> [ReceiverDecision] {
        try await sendMessage(message, dialect: dialect, now: now, profile: profile, sender: sender, pointer: pointer).decisions
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
    ) async throws -> SendOutcome {
        try await send(try prepare(message, dialect: dialect, now: now, profile: profile, sender: sender, pointer: pointer))
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
        /// Targets that must exist when it is decided (a vendor send's users or group): naming one the
        /// store does not know fails the send with ``UnknownTargets`` and changes nothing.
        public var requiredTargets: [StateKeys.Target] = []
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
    public func send(_ prepared: PreparedMessage) async throws -> SendOutcome {
        try await send([prepared])[0].get()
    }

    /// Sends several prepared messages in one write transaction (group commit): each message is
    /// decided and counted as ``send(_:)`` does, in order, each seeing the ones before it. A message
    /// that fails leaves nothing behind and the others are kept.
    ///
    /// What the batch reads is named first and read in one call; the messages are decided from it,
    /// and their counters, outbox rows and records written together (a few statements for the batch).
    /// - Parameter batch: messages from ``prepare(_:dialect:now:profile:sender:pointer:)``.
    /// - Returns: one result per message, in order.
    /// - Throws: when the read or the commit fails; then none of the messages was sent.
    public func send(_ batch: [PreparedMessage]) async throws -> [Result<SendOutcome, any Error>] {
        try await update(sending(batch))
    }

    /// Names what a batch reads — each message's record (the repeat check), the targets it requires,
    /// and what deciding it anew reads — and decides it on what was read. Pure.
    func sending(_ batch: [PreparedMessage]) -> PlannedUpdate<[Result<SendOutcome, any Error>]> {
        var keys = StateKeys()
        let planned = batch.map { prepared in
            PlannedMessage(
                record: prepared.message.id.isEmpty ? nil : keys.add(StateKeys.Record(id: prepared.message.id, since: repeatCutoff(at: prepared.now))),
                targets: prepared.requiredTargets.map { keys.add($0) },
                fresh: Self.plan(prepared, into: &keys))
        }
        return PlannedUpdate(keys: keys) { [self] in decide(batch, planned: planned, in: $0) }
    }

    /// Decides a batch from what was read for it, in order, each message seeing the ones before it.
    /// Pure: a message that fails (an unknown target, a damaged record or profile) fails before it
    /// changes anything, and the others go on.
    private func decide(_ batch: [PreparedMessage], planned: [PlannedMessage], in snapshot: StateSnapshot) -> (changes: StateChanges, outcome: [Result<SendOutcome, any Error>]) {
        var effects = SendEffects()
        var results: [Result<SendOutcome, any Error>] = []
        results.reserveCapacity(batch.count)
        for (prepared, keys) in zip(batch, planned) {
            do {
                results.append(.success(try decide(prepared, keys: keys, in: snapshot, after: &effects)))
            } catch {
                results.append(.failure(error))
            }
        }
        return (effects.changes, results)
    }

    /// Decides one message of a batch from the batch's snapshot, after the messages before it.
    /// - Throws: ``UnknownTargets``, or what reading its record or group profile found damaged —
    ///   before it changes `effects`.
    private func decide(_ prepared: PreparedMessage, keys: PlannedMessage, in snapshot: StateSnapshot, after effects: inout SendEffects) throws -> SendOutcome {
        let id = prepared.message.id
        if !keys.targets.isEmpty {
            var unknown: [String] = []
            for (target, position) in zip(prepared.requiredTargets, keys.targets) where !snapshot.knownTargets[position] && !unknown.contains(target.id) {
                unknown.append(target.id)
            }
            if !unknown.isEmpty { throw UnknownTargets(targets: unknown) }
        }
        if !id.isEmpty, let earlier = effects.decisions(of: id, since: repeatCutoff(at: prepared.now)) {
            return SendOutcome(messageID: id, decisions: earlier, isRepeat: true)
        }
        let reads: MessageReads
        if let position = keys.record, let record = snapshot.records[position] {
            reads = .repeated(try SentMessageRecord.decode(record.bytes, messageID: id, roll: record.roll))
        } else {
            reads = .fresh(try Self.reads(keys.fresh, in: snapshot, group: prepared.group))
        }
        return decide(prepared, reads: reads, after: &effects)
    }

    /// Where one message's reads are in its batch's snapshot.
    private struct PlannedMessage: Sendable {
        /// Its id's record (`nil`: no id).
        var record: Int?
        /// The targets it requires.
        var targets: [Int]
        /// What deciding it anew reads.
        var fresh: MessageKeys
    }

    /// A send named targets the store does not know (``PreparedMessage/requiredTargets``): it was
    /// not sent.
    public struct UnknownTargets: Error, Hashable, Sendable {
        /// The unknown targets, each once, in the order the message names them.
        public var targets: [String]
        public init(targets: [String]) { self.targets = targets }
    }

    /// The first instant of the repeat window that ends at `now`: a record sent before it is forgotten.
    func repeatCutoff(at now: Instant) -> Instant { now.adding(seconds: -repeatWindowSeconds) }
}
