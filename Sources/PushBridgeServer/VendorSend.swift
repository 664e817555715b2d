import Hummingbird
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeVendorREST

/// What a vendor send did: each message's id and outcome, in request order.
package struct VendorSendResult: Sendable {
    package var messages: [(message: VendorMessage, outcome: PushFacade.SendOutcome)]
    /// Targets left out as unknown (only when the send skips them).
    package var unknown: [String] = []
    /// Each group message's sequence in its group, when asked for (a vendor's answer may carry it).
    package var sequences: [Int64] = []

    /// `PushBridge-Messages: id,id,…`: the ids to read the decisions back with (`GET /v1/apps/{app}/messages/{id}`).
    package var header: String { messages.map(\.outcome.messageID).joined(separator: ",") }
}

extension ServiceRoutes {
    /// Message ids for a vendor send: from `PushBridge-Message-Id` when the caller gives one (the
    /// vendors' bodies carry none; with it a retried request is a repeat, and a conformance run can
    /// match an SDK fixture's id), `<id>-2`, `<id>-3` … for a send's further messages; otherwise new ones.
    package func messageIDs(_ request: Request) throws -> () -> String {
        guard let given = request.headers[.pushBridgeMessageID] else { return { apps.newMessageID(.now) } }
        let expected = "a message id of 1–128 bytes with no control character"
        guard !given.isEmpty, given.utf8.count <= 128 else {
            throw ServiceError(.badRequest, code: "invalid-value", pointer: "PushBridge-Message-Id", expected: expected, found: "\(given.utf8.count) bytes")
        }
        if let violation = IdentifierRule.violation(in: given) {
            throw ServiceError(.badRequest, code: "invalid-value", pointer: "PushBridge-Message-Id", expected: expected, found: violation)
        }
        let counter = MessageCounter()
        return { counter.next(given) }
    }

    /// Reads every message (bad input refuses the whole request, nothing stored), then, in one
    /// write, checks the targets and sends: the same facade path as `POST /v1/apps/{app}/messages`
    /// (one message without `sequencing` goes as that route's do, in a batch with the sends next to it).
    /// A target the app knows nothing of (a user with no record, a group with neither members nor a profile) refuses
    /// the whole send with ``unknownTargetCode`` — or, with `skippingUnknown`, leaves out the messages
    /// to it and names it in ``VendorSendResult/unknown``. The check runs in the writer: atomic with
    /// the send, and no extra read on another thread.
    ///
    /// With `sequencing`, each group message moves its group's message sequence on (a repeat reads
    /// it), in the same write.
    package func send(_ messages: [VendorMessage], in tenant: AppTenant, skippingUnknown: Bool = false, sequencing: Bool = false) async throws -> VendorSendResult {
        let now = Instant.now
        let prepared = try await answering {
            try messages.map { try tenant.facade.prepare($0.message, dialect: $0.dialect, now: now, sender: $0.sender) }
        }
        let (sent, unknown, sequences) = try await answering { () async throws -> ([(Int, PushFacade.SendOutcome)], [String], [Int64]) in
            if messages.count == 1 && !sequencing {
                // One message: a send like any other, decided in a batch with the sends next to it,
                // its targets read and checked with what it reads.
                let message = messages[0]
                var checked = prepared[0]
                checked.requiredTargets = message.targets.map { message.isGroup ? .group($0) : .user($0) }
                do {
                    let outcome = try await tenant.send(checked)
                    return ([(0, outcome)], [], [])
                } catch let refusal as PushFacade.UnknownTargets {
                    guard skippingUnknown else { throw Self.unknownTargetRefusal(refusal.targets) }
                    return ([], refusal.targets, [])
                }
            }
            return try await tenant.write { facade in
                let unknown = try Self.unknownTargets(of: messages, in: facade)
                let known = messages.indices.filter { index in !messages[index].targets.contains { unknown.contains($0) } }
                if !unknown.isEmpty && !skippingUnknown { throw Self.unknownTargetRefusal(unknown) }
                // One batch: a message that fails fails the request, and the write undoes them all.
                let outcomes = try facade.send(known.map { prepared[$0] }).map { try $0.get() }
                var sequences: [Int64] = []
                if sequencing {
                    for (index, outcome) in zip(known, outcomes) where messages[index].isGroup {
                        sequences.append(try facade.messageSequence(of: messages[index].targets[0], advancing: !outcome.isRepeat))
                    }
                }
                return (Array(zip(known, outcomes)), unknown, sequences)
            }
        }
        for (index, outcome) in sent {
            let message = messages[index]
            var counts: [String: Int] = [:]
            for item in outcome.decisions { counts[item.fanOut.outcomeName, default: 0] += 1 }
            metrics.message(dialect: message.dialect, isRepeat: outcome.isRepeat, outcomes: counts)
            if logger.logLevel <= .info {
                logger.info(
                    "message decided",
                    metadata: [
                        "app": "\(tenant.id)", "message": "\(outcome.messageID)", "dialect": "\(message.dialect)", "repeat": "\(outcome.isRepeat)",
                        "receivers": "\(outcome.decisions.count)",
                        "outcomes": "\(counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))",
                    ])
            }
        }
        return VendorSendResult(messages: sent.map { (messages[$0.0], $0.1) }, unknown: unknown, sequences: sequences)
    }

    /// The code of the refusal a send to unknown targets gets (its `found` lists them).
    package static let unknownTargetCode = "unknown-target"

    /// The refusal of a send to targets the app does not know.
    static func unknownTargetRefusal(_ targets: [String]) -> ServiceError {
        ServiceError(.notFound, code: unknownTargetCode, pointer: "", expected: "targets the app knows", found: targets.joined(separator: ","))
    }

    /// The targets of `messages` the app knows nothing of, each once, in request order.
    static func unknownTargets(of messages: [VendorMessage], in facade: PushFacade) throws -> [String] {
        var unknown: [String] = []
        for message in messages {
            for target in message.targets where try message.isGroup ? !facade.groupExists(target) : !facade.knowsUser(target) {
                if !unknown.contains(target) { unknown.append(target) }
            }
        }
        return unknown
    }
}

/// Numbers a send's messages after the first.
final class MessageCounter: @unchecked Sendable {
    private var count = 0
    func next(_ id: String) -> String {
        count += 1
        return count == 1 ? id : "\(id)-\(count)"
    }
}

extension HTTPFields.Element.Name {
    /// `PushBridge-Message-Id`: the id a vendor send's (first) message takes.
    package static let pushBridgeMessageID = Self("PushBridge-Message-Id")!

    /// `PushBridge-Messages`: the ids of the messages a vendor send made, comma-separated.
    package static let pushBridgeMessages = Self("PushBridge-Messages")!
}
