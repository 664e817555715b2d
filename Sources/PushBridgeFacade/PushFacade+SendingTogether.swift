import PushBridgeCore
import PushBridgeStore

// A vendor request's several messages: sent together or not at all.
extension PushFacade {
    /// What ``sendTogether(_:skippingUnknownTargets:sequencing:)`` did.
    public struct SentTogether: Sendable {
        /// Each sent message's position in the batch and its outcome, in batch order.
        public var sent: [(index: Int, outcome: SendOutcome)]
        /// The targets the store does not know (``PreparedMessage/requiredTargets``), each once, in batch order.
        public var unknownTargets: [String]
        /// With sequencing, each sent group message's group message sequence, in batch order.
        public var sequences: [Int64]
    }

    /// Sends several messages of one request in one update: every message is sent, or none.
    ///
    /// A message naming a target the store does not know (``PreparedMessage/requiredTargets``) fails
    /// the whole batch with ``UnknownTargets`` (all of them) — or, `skippingUnknownTargets`, is left
    /// out and its unknown targets listed. With `sequencing`, each group message moves its group's
    /// message sequence on (Tencent `MsgSeq`; a repeat reads it without moving it).
    /// - Parameters:
    ///   - batch: messages from ``prepare(_:dialect:now:profile:sender:pointer:)``.
    ///   - skippingUnknownTargets: leave out the messages to unknown targets instead of failing.
    ///   - sequencing: move the group message sequences on.
    /// - Throws: ``UnknownTargets``, or the first message's failure; then nothing was sent.
    public func sendTogether(_ batch: [PreparedMessage], skippingUnknownTargets: Bool, sequencing: Bool) async throws -> SentTogether {
        let send = sending(batch)
        var keys = send.keys
        let sequences = batch.map { prepared -> Int? in
            guard sequencing, case .group(let group) = prepared.audience else { return nil }
            return keys.addSequence(of: group)
        }
        return try await update(PlannedUpdate(keys: keys) { snapshot in
            var (changes, results) = try send.decide(snapshot)
            var unknown: [String] = []
            for case .failure(let refusal as UnknownTargets) in results {
                for target in refusal.targets where !unknown.contains(target) { unknown.append(target) }
            }
            if !unknown.isEmpty && !skippingUnknownTargets { throw UnknownTargets(targets: unknown) }
            var together = SentTogether(sent: [], unknownTargets: unknown, sequences: [])
            var advances: [String: Int] = [:]
            for (index, result) in results.enumerated() {
                if case .failure(let error) = result {
                    if error is UnknownTargets { continue }
                    throw error
                }
                let outcome = try result.get()
                together.sent.append((index, outcome))
                if let position = sequences[index], case .group(let group) = batch[index].audience {
                    if !outcome.isRepeat { advances[group, default: 0] += 1 }
                    together.sequences.append(snapshot.sequences[position] + Int64(advances[group] ?? 0))
                }
            }
            for (group, count) in advances.sorted(by: { $0.key < $1.key }) { changes.groups.append(.init(group: group, sequenceAdvances: count)) }
            return (changes, together)
        })
    }
}
