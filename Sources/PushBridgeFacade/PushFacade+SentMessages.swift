import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

/// The record a sent message leaves behind, so that a repeated send returns the same decisions
/// byte for byte and changes no counter (SPEC §10).
///
/// A compact binary form, because a group send writes one for every receiver in its transaction
/// (JSON with escaping cost ~150 ms for 77,000 pushes; this is a copy of the bytes): the magic
/// `PBR1`, the number of decisions, then per decision its receiver and either `0` + the reason or
/// `1` + the payload bytes, the badge counter and the deliveries (token, certificate, binding time,
/// headers). Strings and byte runs are a 32-bit little-endian length and the bytes; integers are
/// 64-bit little-endian.
enum SentMessageRecord {
    static let magic: [UInt8] = Array("PBR1".utf8)

    static func encode(_ decisions: [PushFacade.ReceiverDecision]) -> [UInt8] {
        var out = Writer()
        out.bytes.reserveCapacity(16 + decisions.count * 64)
        out.bytes += magic
        out.integer(Int64(decisions.count))
        for item in decisions {
            out.string(item.receiver)
            switch item.decision {
            case .suppressed(let reason):
                out.bytes.append(0)
                out.string(reason.rawValue)
            case .push(let request):
                out.bytes.append(1)
                out.run(request.payload)
                out.integer(Int64(request.badgeCounter))
                out.integer(Int64(request.deliveries.count))
                for delivery in request.deliveries {
                    let device = delivery.device
                    out.string(device.token)
                    out.string(device.certificate.bundleId)
                    out.string(device.certificate.environment.rawValue)
                    out.optional(device.certificate.name)
                    out.optional(device.certificate.busiId)
                    out.integer(device.boundAt.milliseconds)
                    out.integer(Int64(delivery.headers.count))
                    for header in delivery.headers {
                        out.string(header.name)
                        out.string(header.value)
                    }
                }
            }
        }
        return out.bytes
    }

    /// Reads a record back; a record PushBridge did not write is a store failure.
    static func decode(_ bytes: [UInt8], messageID: String) throws -> [PushFacade.ReceiverDecision] {
        var r = Reader(bytes: bytes, messageID: messageID)
        guard bytes.starts(with: magic) else { throw r.broken("not a PushBridge record") }
        r.offset = magic.count
        let count = try r.count()
        var out: [PushFacade.ReceiverDecision] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            let receiver = try r.string()
            switch try r.byte() {
            case 0:
                let word = try r.string()
                guard let reason = SuppressionReason(rawValue: word) else { throw r.broken("reason \"\(word)\" of \(receiver)") }
                out.append(PushFacade.ReceiverDecision(receiver: receiver, decision: .suppressed(reason)))
            case 1:
                let payload = try r.run()
                let badge = Int(try r.integer())
                var deliveries: [APNsDelivery] = []
                for _ in 0..<(try r.count()) {
                    let token = try r.string()
                    let bundleId = try r.string()
                    let environmentWord = try r.string()
                    guard let environment = APNsEnvironment(rawValue: environmentWord) else { throw r.broken("environment of \(receiver)") }
                    let certificate = Certificate(name: try r.optional(), busiId: try r.optional(), bundleId: bundleId, environment: environment)
                    let device = Device(token: token, certificate: certificate, boundAt: Instant(milliseconds: try r.integer()))
                    var headers: [(name: String, value: String)] = []
                    for _ in 0..<(try r.count()) { headers.append((try r.string(), try r.string())) }
                    deliveries.append(APNsDelivery(device: device, headers: headers))
                }
                out.append(PushFacade.ReceiverDecision(receiver: receiver, decision: .push(APNsRequest(payload: payload, deliveries: deliveries, badgeCounter: badge))))
            default:
                throw r.broken("a decision of \(receiver) that is neither pushed nor suppressed")
            }
        }
        guard r.offset == bytes.count else { throw r.broken("bytes after the last decision") }
        return out
    }

    struct Writer {
        var bytes: [UInt8] = []

        mutating func integer(_ value: Int64) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func run<C: Collection>(_ run: C) where C.Element == UInt8 {
            withUnsafeBytes(of: UInt32(run.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: run)
        }

        mutating func string(_ text: String) { run(text.utf8) }

        mutating func optional(_ text: String?) {
            if let text {
                bytes.append(1)
                string(text)
            } else {
                bytes.append(0)
            }
        }
    }

    struct Reader {
        let bytes: [UInt8]
        let messageID: String
        var offset = 0

        func broken(_ what: String) -> StoreError {
            StoreError(.unexpectedValue, "the sent-message record of \"\(messageID)\" is damaged: \(what)", context: "sent_messages.decisions")
        }

        mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, bytes.count - offset >= count else { throw broken("it ends early") }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func byte() throws -> UInt8 { try take(1).first! }

        mutating func integer() throws -> Int64 {
            try take(8).reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        }

        /// A count of things that follow, bounded by the bytes left (each takes at least one byte).
        mutating func count() throws -> Int {
            let value = try integer()
            guard value >= 0, value <= bytes.count - offset else { throw broken("a count of \(value)") }
            return Int(value)
        }

        mutating func run() throws -> [UInt8] {
            let length = try take(4).reversed().reduce(0) { $0 << 8 | Int($1) }
            return Array(try take(length))
        }

        mutating func string() throws -> String {
            let run = try run()
            guard let text = String(validating: run, as: UTF8.self) else { throw broken("text that is not UTF-8") }
            return text
        }

        mutating func optional() throws -> String? {
            switch try byte() {
            case 0: return nil
            case 1: return try string()
            default: throw broken("an optional text marker")
            }
        }
    }
}
