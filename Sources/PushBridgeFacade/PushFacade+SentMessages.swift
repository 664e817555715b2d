import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

/// The record a sent message leaves behind, so that a repeated send returns the same decisions
/// byte for byte and changes no counter (SPEC §10).
///
/// One compact JSON array, one object per receiver in decision order:
/// `{"r":receiver,"reason":R}` or `{"r":receiver,"payload":"<payload text>","badge":N,"deliveries":[{"token",
/// "bundleId","environment","name"?,"busiId"?,"boundAt":ms,"headers":[[name,value],…]},…]}`. The payload is kept
/// as a string so its bytes come back exactly.
enum SentMessageRecord {
    static func encode(_ decisions: [PushFacade.ReceiverDecision]) -> [UInt8] {
        var w = JSONWriter(capacity: 64 + decisions.count * 96)
        w.raw("[")
        for (i, item) in decisions.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"r\":")
            w.string(item.receiver)
            switch item.decision {
            case .suppressed(let reason):
                w.raw(",\"reason\":")
                w.string(reason.rawValue)
            case .push(let request):
                w.raw(",\"payload\":")
                w.string(request.payloadText)
                w.raw(",\"badge\":")
                w.integer(request.badgeCounter)
                w.raw(",\"deliveries\":[")
                for (j, delivery) in request.deliveries.enumerated() {
                    if j > 0 { w.raw(",") }
                    let device = delivery.device
                    w.raw("{\"token\":")
                    w.string(device.token)
                    w.raw(",\"bundleId\":")
                    w.string(device.certificate.bundleId)
                    w.raw(",\"environment\":")
                    w.string(device.certificate.environment.rawValue)
                    if let name = device.certificate.name {
                        w.raw(",\"name\":")
                        w.string(name)
                    }
                    if let busiId = device.certificate.busiId {
                        w.raw(",\"busiId\":")
                        w.string(busiId)
                    }
                    w.raw(",\"boundAt\":")
                    w.integer(device.boundAt.milliseconds)
                    w.raw(",\"headers\":[")
                    for (k, header) in delivery.headers.enumerated() {
                        if k > 0 { w.raw(",") }
                        w.raw("[")
                        w.string(header.name)
                        w.raw(",")
                        w.string(header.value)
                        w.raw("]")
                    }
                    w.raw("]}")
                }
                w.raw("]")
            }
            w.raw("}")
        }
        w.raw("]")
        return w.bytes
    }

    /// Reads a record back; a record PushBridge did not write is a store failure.
    static func decode(_ bytes: [UInt8], messageID: String) throws -> [PushFacade.ReceiverDecision] {
        func broken(_ what: String) -> StoreError {
            StoreError(.unexpectedValue, "the sent-message record of \"\(messageID)\" is damaged: \(what)", context: "sent_messages.decisions")
        }
        let root: JSONValue
        do { root = try JSONParser.parse(bytes) } catch { throw broken("not JSON") }
        guard let items = root.arrayValue else { throw broken("not an array") }
        return try items.map { item in
            guard let receiver = item["r"]?.stringValue else { throw broken("a decision without its receiver") }
            if let reason = item["reason"]?.stringValue {
                guard let reason = SuppressionReason(rawValue: reason) else { throw broken("reason \"\(reason)\"") }
                return PushFacade.ReceiverDecision(receiver: receiver, decision: .suppressed(reason))
            }
            guard let payload = item["payload"]?.stringValue, let badge = item["badge"]?.intValue, let deliveries = item["deliveries"]?.arrayValue
            else { throw broken("a push without payload, badge or deliveries") }
            let decoded: [APNsDelivery] = try deliveries.map { d in
                guard let token = d["token"]?.stringValue, let bundleId = d["bundleId"]?.stringValue,
                    let environment = d["environment"]?.stringValue.flatMap(APNsEnvironment.init(rawValue:)),
                    let boundAt = d["boundAt"]?.intValue, let headers = d["headers"]?.arrayValue
                else { throw broken("a delivery of \(receiver)") }
                let certificate = Certificate(name: d["name"]?.stringValue, busiId: d["busiId"]?.stringValue, bundleId: bundleId, environment: environment)
                return APNsDelivery(
                    device: Device(token: token, certificate: certificate, boundAt: Instant(milliseconds: boundAt)),
                    headers: try headers.map { pair in
                        guard let p = pair.arrayValue, p.count == 2, let name = p[0].stringValue, let value = p[1].stringValue else {
                            throw broken("a header of \(receiver)")
                        }
                        return (name, value)
                    })
            }
            return PushFacade.ReceiverDecision(
                receiver: receiver, decision: .push(APNsRequest(payload: Array(payload.utf8), deliveries: decoded, badgeCounter: Int(badge))))
        }
    }
}
