import Hummingbird
import Logging
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeStore
import PushBridgeFacade
import PushBridgeJSON

extension ServiceRoutes {
    /// Sending a dialect message, and reading a sent message back.
    func registerMessages(on router: RecordingRouter<Context>) {
        // → 201 {"message": id, "decisions": [...]}; a repeated id → 200, the first decisions, "repeat": true.
        // ?answer=summary → {"message": id, "receivers": n, "pushed": n, "suppressed": {reason: n}} instead
        // of one decision per receiver (a large group: the decisions stay readable with GET).
        router.post("/v1/apps/:app/messages") { request, context in
            let tenant = try await tenant(request, context)
            let dialect = try dialect(request, in: tenant)
            let query = request.uri.queryParameters
            let profile: Profile?
            do {
                profile = try query.get("profile").map { try tenant.registry.profile($0, at: .root) }
            } catch let error as InputError {
                throw ServiceError(error, parameter: "profile")
            }
            let sender = try queryIdentifier("sender", request)
            let answer = try MessageAnswer(query.get("answer"))
            let message = try await body(request, context)
            let now = Instant.now
            // Read and checked here, in parallel with other requests: bad input never reaches the writer.
            let prepared = try await answering {
                try tenant.facade.prepare(message, dialect: dialect, now: now, profile: profile, sender: sender)
            }
            let outcome = try await answering { try await tenant.send(prepared) }
            var outcomes: [String: Int] = [:]
            for item in outcome.decisions { outcomes[item.fanOut.outcomeName, default: 0] += 1 }
            metrics.message(dialect: dialect, isRepeat: outcome.isRepeat, outcomes: outcomes)
            if logger.logLevel <= .info { logger.info(
                "message decided",
                metadata: [
                    "app": "\(tenant.id)", "message": "\(outcome.messageID)", "dialect": "\(dialect)", "repeat": "\(outcome.isRepeat)",
                    "receivers": "\(outcome.decisions.count)",
                    "outcomes": "\(outcomes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))",
                ]) }
            if logger.logLevel <= .debug {
                for item in outcome.decisions {
                    logger.debug("decision", metadata: ["message": "\(outcome.messageID)", "receiver": "\(item.receiver)", "outcome": "\(item.fanOut.outcomeName)"])
                }
            }
            let body =
                switch answer {
                case .decisions: Self.messageBody(outcome.messageID, outcome.decisions, isRepeat: outcome.isRepeat)
                case .summary: Self.summaryBody(outcome.messageID, receivers: outcome.decisions.count, outcomes: outcomes, isRepeat: outcome.isRepeat)
                }
            return json(body, status: outcome.isRepeat ? .ok : .created)
        }
        router.get("/v1/apps/:app/messages/:message") { request, context in
            let tenant = try await tenant(request, context)
            let id = try parameter("message", context)
            let now = Instant.now
            let delivering = tenant.facade.queuesDeliveries
            let found = try await answering {
                try await tenant.reading { facade -> ([ReceiverDecision], [DeliveryRecord]?)? in
                    guard let decisions = try await facade.sentMessage(id, now: now) else { return nil }
                    return (decisions, delivering ? try await facade.deliveries(ofMessage: id) : nil)
                }
            }
            guard let (decisions, deliveries) = found else {
                throw ServiceError(.notFound, code: "unknown-reference", expected: "a message id sent within the repeat window", found: JSONWriter.quoted(id))
            }
            return json(Self.messageBody(id, decisions, isRepeat: nil, deliveries: deliveries.map { (tenant.id, $0) }))
        }
    }

    /// `{"message": id, "receivers": n, "pushed": n, "suppressed": {reason: n, …}, "repeat"?: true}`, the
    /// reasons in name order.
    static func summaryBody(_ id: String, receivers: Int, outcomes: [String: Int], isRepeat: Bool) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.raw("{\"message\":")
        w.string(id)
        w.raw(",\"receivers\":")
        w.integer(Int64(receivers))
        w.raw(",\"pushed\":")
        w.integer(Int64(outcomes["push", default: 0]))
        w.raw(",\"suppressed\":{")
        for (i, (reason, count)) in outcomes.filter({ $0.key != "push" }).sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { w.raw(",") }
            w.string(reason)
            w.raw(":")
            w.integer(Int64(count))
        }
        w.raw("}")
        if isRepeat { w.raw(",\"repeat\":true") }
        w.raw("}")
        return w.bytes
    }

    /// `{"message": id, "decisions": [...], "repeat"?: true}`; a read adds `"deliveries"`, each
    /// delivery's state (Specification §13), or `"delivery": "not-configured"` when the service does not deliver.
    static func messageBody(
        _ id: String, _ decisions: [PushFacade.ReceiverDecision], isRepeat: Bool?, deliveries: (app: String, records: [DeliveryRecord])? = nil
    ) -> [UInt8] {
        var w = JSONWriter(capacity: 32 + decisions.count * 400)
        w.raw("{\"message\":")
        w.string(id)
        w.raw(",\"decisions\":[")
        for (i, item) in decisions.enumerated() {
            if i > 0 { w.raw(",") }
            item.write(to: &w)
        }
        var out = w.bytes
        out += Array("]".utf8)
        if isRepeat == true { out += Array(",\"repeat\":true".utf8) }
        if isRepeat == nil {
            if let deliveries {
                out += Self.deliveriesJSON(deliveries.records, app: deliveries.app, message: id)
            } else {
                out += Array(",\"delivery\":\"not-configured\"".utf8)
            }
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension ServiceRoutes {
    /// `,"deliveries":[{"receiver","token","apns-id","state","attempts","status"?,"reason"?,"device-removed"?,"updated"}]`.
    static func deliveriesJSON(_ records: [DeliveryRecord], app: String, message: String) -> [UInt8] {
        var w = JSONWriter(capacity: 16 + records.count * 220)
        w.raw(",\"deliveries\":[")
        for (i, record) in records.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"receiver\":")
            w.string(record.receiver)
            w.raw(",\"token\":")
            w.string(record.token)
            w.raw(",\"apns-id\":")
            w.string(APNsID.make(app: app, message: message, token: record.token))
            w.raw(",\"state\":")
            w.string(record.state.rawValue)
            w.raw(",\"attempts\":")
            w.integer(record.attempts)
            if let status = record.status {
                w.raw(",\"status\":")
                w.integer(status)
            }
            if let reason = record.reason {
                w.raw(",\"reason\":")
                w.string(reason)
            }
            if record.deviceRemoved { w.raw(",\"device-removed\":true") }
            w.raw(",\"updated\":")
            w.integer(record.updatedAt.milliseconds)
            w.raw("}")
        }
        w.raw("]")
        return w.bytes
    }
}

extension FanOutDecision {
    /// `push`, or the reason the receiver was not pushed (metrics and logs).
    var outcomeName: String {
        switch self {
        case .push: return "push"
        case .suppressed(let reason): return reason.rawValue
        }
    }
}

/// What a message POST answers: every receiver's decision (the default), or counts (`?answer=summary`).
enum MessageAnswer {
    case decisions
    case summary

    /// Reads `?answer=`.
    /// - Throws: ``ServiceError`` 400 `invalid-value` at `?answer` for another value.
    init(_ value: String?) throws {
        switch value {
        case nil, "decisions": self = .decisions
        case "summary": self = .summary
        case let other?:
            throw ServiceError(.badRequest, code: "invalid-value", pointer: "?answer", expected: "decisions or summary", found: JSONWriter.quoted(other))
        }
    }
}
