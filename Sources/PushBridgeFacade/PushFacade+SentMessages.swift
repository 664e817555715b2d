import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

/// The record a sent message leaves behind, so that a repeated send returns the same decisions
/// byte for byte and changes no counter (SPEC §10).
///
/// A compact binary form, because a group send writes one for every receiver in its transaction.
/// `PBR2` (written since 0.10): the magic, the number of decisions, then per decision its receiver
/// and either `0` + the reason or `1` + the payload, the badge counter and the deliveries. A payload
/// is kept as its difference from the previous pushed payload (receivers of one message differ in
/// a few bytes: the badge, an id): the length of the common prefix, of the common suffix, and the
/// bytes between. A delivery is its token, its certificate (a number; a certificate's fields follow
/// its first use), its binding time and `0` for the standard headers or their names and values.
/// Counts and lengths are LEB128 varints, signed integers zigzag varints. `PBR1` records (0.9: fixed
/// widths, every payload and header in full) are still read.
enum SentMessageRecord {
    static let magic: [UInt8] = Array("PBR2".utf8)
    static let magicVersion1: [UInt8] = Array("PBR1".utf8)

    static func encode(_ decisions: [PushFacade.ReceiverDecision]) -> [UInt8] {
        var out = Writer()
        out.bytes.reserveCapacity(16 + decisions.count * 40)
        out.bytes += magic
        out.varint(UInt64(decisions.count))
        var previous: [UInt8] = []
        var certificates: [Certificate: Int] = [:]
        var last: (certificate: Certificate, number: Int)?  // receivers' devices mostly share one
        for item in decisions {
            out.string(item.receiver)
            switch item.decision {
            case .suppressed(let reason):
                out.bytes.append(0)
                out.string(reason.rawValue)
            case .push(let request):
                out.bytes.append(1)
                out.difference(request.payload, from: previous)
                previous = request.payload
                out.signed(Int64(request.badgeCounter))
                out.varint(UInt64(request.deliveries.count))
                for delivery in request.deliveries {
                    let device = delivery.device
                    out.string(device.token)
                    if let last, last.certificate == device.certificate {
                        out.varint(UInt64(last.number))
                    } else if let number = certificates[device.certificate] {
                        out.varint(UInt64(number))
                        last = (device.certificate, number)
                    } else {
                        last = (device.certificate, certificates.count)
                        out.varint(UInt64(certificates.count))
                        certificates[device.certificate] = certificates.count
                        out.optional(device.certificate.name)
                        out.optional(device.certificate.busiId)
                        out.string(device.certificate.bundleId)
                        out.string(device.certificate.environment.rawValue)
                    }
                    out.signed(device.boundAt.milliseconds)
                    if delivery.hasStandardHeaders {
                        out.bytes.append(0)
                    } else {
                        out.bytes.append(1)
                        out.varint(UInt64(delivery.headers.count))
                        for header in delivery.headers {
                            out.string(header.name)
                            out.string(header.value)
                        }
                    }
                }
            }
        }
        return out.bytes
    }

    /// Reads a record back; a record PushBridge did not write is a store failure.
    static func decode(_ bytes: [UInt8], messageID: String) throws -> [PushFacade.ReceiverDecision] {
        var r = Reader(bytes: bytes, messageID: messageID)
        if bytes.starts(with: magicVersion1) { return try decodeVersion1(&r) }
        guard bytes.starts(with: magic) else { throw r.broken("not a PushBridge record") }
        r.offset = magic.count
        let count = try r.count(of: r.varint())
        var out: [PushFacade.ReceiverDecision] = []
        out.reserveCapacity(count)
        var previous: [UInt8] = []
        var certificates: [Certificate] = []
        for _ in 0..<count {
            let receiver = try r.string(length: r.varint())
            switch try r.byte() {
            case 0:
                out.append(try r.suppressed(receiver, reason: r.string(length: r.varint())))
            case 1:
                let payload = try r.difference(from: previous)
                previous = payload
                let badge = Int(try r.signed())
                let deliveryCount = try r.count(of: r.varint())
                var deliveries: [APNsDelivery] = []
                deliveries.reserveCapacity(deliveryCount)
                for _ in 0..<deliveryCount {
                    let token = try r.string(length: r.varint())
                    let number = try r.varint()
                    if number == UInt64(certificates.count) {
                        let name = try r.optional { try $0.varint() }
                        let busiId = try r.optional { try $0.varint() }
                        let bundleId = try r.string(length: r.varint())
                        let environmentWord = try r.string(length: r.varint())
                        guard let environment = APNsEnvironment(rawValue: environmentWord) else { throw r.broken("environment of \(receiver)") }
                        certificates.append(Certificate(name: name, busiId: busiId, bundleId: bundleId, environment: environment))
                    }
                    guard number < UInt64(certificates.count) else { throw r.broken("certificate \(number) of \(receiver)") }
                    let device = Device(token: token, certificate: certificates[Int(number)], boundAt: Instant(milliseconds: try r.signed()))
                    switch try r.byte() {
                    case 0: deliveries.append(APNsDelivery(device: device))
                    case 1:
                        var headers: [(name: String, value: String)] = []
                        for _ in 0..<(try r.count(of: r.varint())) { headers.append((try r.string(length: r.varint()), try r.string(length: r.varint()))) }
                        deliveries.append(APNsDelivery(device: device, headers: headers))
                    default: throw r.broken("a headers marker of \(receiver)")
                    }
                }
                out.append(PushFacade.ReceiverDecision(receiver: receiver, decision: .push(APNsRequest(payload: payload, deliveries: deliveries, badgeCounter: badge))))
            default:
                throw r.broken("a decision of \(receiver) that is neither pushed nor suppressed")
            }
        }
        guard r.offset == bytes.count else { throw r.broken("bytes after the last decision") }
        return out
    }

    /// Reads a `PBR1` record (fixed-width integers, payloads and headers in full).
    private static func decodeVersion1(_ r: inout Reader) throws -> [PushFacade.ReceiverDecision] {
        r.offset = magicVersion1.count
        let count = try r.count(of: r.fixed())
        var out: [PushFacade.ReceiverDecision] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            let receiver = try r.string(length: r.length32())
            switch try r.byte() {
            case 0:
                out.append(try r.suppressed(receiver, reason: r.string(length: r.length32())))
            case 1:
                let payload = Array(try r.take(Int(r.length32())))
                let badge = Int(Int64(bitPattern: try r.fixed()))
                var deliveries: [APNsDelivery] = []
                for _ in 0..<(try r.count(of: r.fixed())) {
                    let token = try r.string(length: r.length32())
                    let bundleId = try r.string(length: r.length32())
                    let environmentWord = try r.string(length: r.length32())
                    guard let environment = APNsEnvironment(rawValue: environmentWord) else { throw r.broken("environment of \(receiver)") }
                    let certificate = Certificate(
                        name: try r.optional { try $0.length32() }, busiId: try r.optional { try $0.length32() }, bundleId: bundleId,
                        environment: environment)
                    let device = Device(token: token, certificate: certificate, boundAt: Instant(milliseconds: Int64(bitPattern: try r.fixed())))
                    var headers: [(name: String, value: String)] = []
                    for _ in 0..<(try r.count(of: r.fixed())) { headers.append((try r.string(length: r.length32()), try r.string(length: r.length32()))) }
                    deliveries.append(APNsDelivery(device: device, headers: headers))
                }
                out.append(PushFacade.ReceiverDecision(receiver: receiver, decision: .push(APNsRequest(payload: payload, deliveries: deliveries, badgeCounter: badge))))
            default:
                throw r.broken("a decision of \(receiver) that is neither pushed nor suppressed")
            }
        }
        guard r.offset == r.bytes.count else { throw r.broken("bytes after the last decision") }
        return out
    }

    struct Writer {
        var bytes: [UInt8] = []

        /// An unsigned LEB128 varint.
        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        /// A zigzag varint.
        mutating func signed(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

        mutating func run<C: Collection>(_ run: C) where C.Element == UInt8 {
            varint(UInt64(run.count))
            bytes.append(contentsOf: run)
        }

        mutating func string(_ text: String) {
            if let written = text.utf8.withContiguousStorageIfAvailable({ run($0) }) { return written }
            run(text.utf8)
        }

        mutating func optional(_ text: String?) {
            if let text {
                bytes.append(1)
                string(text)
            } else {
                bytes.append(0)
            }
        }

        /// `payload` as the lengths of its common prefix and suffix with `previous`, and the bytes between.
        mutating func difference(_ payload: [UInt8], from previous: [UInt8]) {
            let (prefix, suffix) = payload.withUnsafeBufferPointer { new in
                previous.withUnsafeBufferPointer { old in
                    let limit = min(new.count, old.count)
                    var prefix = 0
                    while prefix < limit && new[prefix] == old[prefix] { prefix += 1 }
                    var suffix = 0
                    while suffix < limit - prefix && new[new.count - 1 - suffix] == old[old.count - 1 - suffix] { suffix += 1 }
                    return (prefix, suffix)
                }
            }
            varint(UInt64(prefix))
            varint(UInt64(suffix))
            payload.withUnsafeBufferPointer { run(UnsafeBufferPointer(rebasing: $0[prefix..<($0.count - suffix)])) }
        }
    }

    struct Reader {
        let bytes: [UInt8]
        let messageID: String
        var offset = 0

        func broken(_ what: String) -> StoreError {
            StoreError(.unexpectedValue, "the sent-message record of \"\(messageID)\" is damaged: \(what)", context: "sent_messages.decisions")
        }

        /// A suppressed decision, its reason word read.
        func suppressed(_ receiver: String, reason word: String) throws -> PushFacade.ReceiverDecision {
            guard let reason = SuppressionReason(rawValue: word) else { throw broken("reason \"\(word)\" of \(receiver)") }
            return PushFacade.ReceiverDecision(receiver: receiver, decision: .suppressed(reason))
        }

        mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, bytes.count - offset >= count else { throw broken("it ends early") }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw broken("it ends early") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let b = try byte()
                guard shift < 64 else { throw broken("a number too long") }
                value |= UInt64(b & 0x7f) << shift
                if b < 0x80 { return value }
                shift += 7
            }
        }

        mutating func signed() throws -> Int64 {
            let raw = try varint()
            return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
        }

        /// A `PBR1` 64-bit little-endian integer.
        mutating func fixed() throws -> UInt64 {
            try take(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }

        /// A `PBR1` 32-bit little-endian length.
        mutating func length32() throws -> UInt64 {
            try take(4).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }

        /// A count of things that follow, bounded by the bytes left (each takes at least one byte).
        func count(of value: UInt64) throws -> Int {
            guard value <= UInt64(bytes.count - offset) else { throw broken("a count of \(value)") }
            return Int(value)
        }

        mutating func string(length: UInt64) throws -> String {
            guard let text = String(validating: try take(count(of: length)), as: UTF8.self) else { throw broken("text that is not UTF-8") }
            return text
        }

        mutating func optional(length: (inout Reader) throws -> UInt64) throws -> String? {
            switch try byte() {
            case 0: return nil
            case 1: return try string(length: length(&self))
            default: throw broken("an optional text marker")
            }
        }

        /// A payload written by ``Writer/difference(_:from:)``.
        mutating func difference(from previous: [UInt8]) throws -> [UInt8] {
            let prefix = try varint()
            let suffix = try varint()
            guard prefix <= UInt64(previous.count), suffix <= UInt64(previous.count) - prefix else { throw broken("a payload difference") }
            let middle = try take(count(of: varint()))
            var payload: [UInt8] = []
            payload.reserveCapacity(Int(prefix) + middle.count + Int(suffix))
            payload += previous[0..<Int(prefix)]
            payload += middle
            payload += previous[(previous.count - Int(suffix))...]
            return payload
        }
    }
}
