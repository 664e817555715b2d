import Hummingbird
import Logging
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
    /// update, checks the targets and sends: the same facade path as `POST /v1/apps/{app}/messages`
    /// (one message without `sequencing` goes as that route's do, in a batch with the sends next to it).
    /// A target the app knows nothing of (a user with no record, a group with neither members nor a profile) refuses
    /// the whole send with ``unknownTargetCode`` — or, with `skippingUnknown`, leaves out the messages
    /// to it and names it in ``VendorSendResult/unknown``. The check is read and decided with the
    /// send: atomic with it, and no read of its own.
    ///
    /// With `sequencing`, each group message moves its group's message sequence on (a repeat reads
    /// it), in the same update.
    package func send(_ messages: [VendorMessage], in tenant: AppTenant, skippingUnknown: Bool = false, sequencing: Bool = false) async throws -> VendorSendResult {
        try await answering {
            do {
                return try await tenant.send(messages, skippingUnknown: skippingUnknown, sequencing: sequencing, metrics: metrics, logger: logger)
            } catch let refusal as PushFacade.UnknownTargets {
                throw Self.unknownTargetRefusal(refusal.targets)
            }
        }
    }

    /// The code of the refusal a send to unknown targets gets (its `found` lists them).
    package static let unknownTargetCode = "unknown-target"

    /// The refusal of a send to targets the app does not know.
    static func unknownTargetRefusal(_ targets: [String]) -> ServiceError {
        ServiceError(.notFound, code: unknownTargetCode, pointer: "", expected: "targets the app knows", found: targets.joined(separator: ","))
    }
}

extension AppTenant {
    /// Reads every message, then, in one update, checks the targets and sends (``ServiceRoutes/send(_:in:skippingUnknown:sequencing:)``,
    /// which answers the refusals); counted in the metrics and logged.
    /// - Throws: `PushFacade.UnknownTargets` when a target is unknown and not skipped; `InputError`, store errors.
    func send(_ messages: [VendorMessage], skippingUnknown: Bool, sequencing: Bool, metrics: ServiceMetrics, logger: Logger) async throws -> VendorSendResult {
        let tenant = self
        let batch = try prepare(messages, now: .now)
        let (sent, unknown, sequences) = try await { () async throws -> ([(Int, PushFacade.SendOutcome)], [String], [Int64]) in
            if messages.count == 1 && !sequencing {
                // One message: a send like any other, decided in a batch with the sends next to it,
                // its targets read and checked with what it reads.
                do {
                    let outcome = try await tenant.send(batch[0])
                    return ([(0, outcome)], [], [])
                } catch let refusal as PushFacade.UnknownTargets {
                    guard skippingUnknown else { throw refusal }
                    return ([], refusal.targets, [])
                }
            }
            let together = try await tenant.update { try await $0.sendTogether(batch, skippingUnknownTargets: skippingUnknown, sequencing: sequencing) }
            return (together.sent.map { ($0.index, $0.outcome) }, together.unknownTargets, together.sequences)
        }()
        let result = VendorSendResult(messages: sent.map { (messages[$0.0], $0.1) }, unknown: unknown, sequences: sequences)
        counted(result.messages, metrics: metrics, logger: logger)
        return result
    }

    /// The messages prepared by the app's facade, each with its targets as required targets.
    func prepare(_ messages: [VendorMessage], now: Instant) throws -> [PushFacade.PreparedMessage] {
        try messages.map { message in
            var prepared = try facade.prepare(message.message, dialect: message.dialect, now: now, sender: message.sender)
            prepared.requiredTargets = message.targets.map { message.isGroup ? .group($0) : .user($0) }
            return prepared
        }
    }

    /// Counts sent messages in the metrics and logs each (at info).
    func counted(_ sent: [(message: VendorMessage, outcome: PushFacade.SendOutcome)], metrics: ServiceMetrics, logger: Logger) {
        for (message, outcome) in sent {
            var counts: [String: Int] = [:]
            for item in outcome.decisions { counts[item.fanOut.outcomeName, default: 0] += 1 }
            metrics.message(dialect: message.dialect, isRepeat: outcome.isRepeat, outcomes: counts)
            if logger.logLevel <= .info {
                logger.info(
                    "message decided",
                    metadata: [
                        "app": "\(id)", "message": "\(outcome.messageID)", "dialect": "\(message.dialect)", "repeat": "\(outcome.isRepeat)",
                        "receivers": "\(outcome.decisions.count)",
                        "outcomes": "\(counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))",
                    ])
            }
        }
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

    /// `PushBridge-Task`: the push task a vendor request made (read it with `GET /v1/apps/{app}/push-tasks/{id}`).
    package static let pushBridgeTask = Self("PushBridge-Task")!
}
