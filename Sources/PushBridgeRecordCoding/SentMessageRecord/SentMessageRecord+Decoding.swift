import PushBridgeCore
import PushBridgeJSON

extension SentMessageRecord {
    /// Reads a record back.
    /// - Parameters:
    ///   - bytes: the record.
    ///   - roll: a stored roll's bytes by id, for a `PBR4` record (`nil`: no such roll).
    /// - Throws: ``RecordDamage`` when the bytes are not a record PushBridge wrote (or refer to a
    ///   roll that is not stored or damaged); what `roll` throws.
    /// The id of the stored roll a `PBR4` record refers to; `nil` for a record that refers to none
    /// (or bytes too short to say: ``decode(_:roll:)`` names the damage).
    /// - Parameter bytes: the record.
    package static func rollID(of bytes: [UInt8]) -> Int64? {
        guard bytes.starts(with: magicVersion4) else { return nil }
        var r = RecordReader(bytes: bytes)
        r.offset = magicVersion4.count
        guard let id = try? r.varint(), id <= UInt64(Int64.max) else { return nil }
        return Int64(id)
    }

    package static func decode(_ bytes: [UInt8], roll: (Int64) throws -> [UInt8]? = { _ in nil }) throws -> [ReceiverDecision] {
        var r = RecordReader(bytes: bytes)
        if bytes.starts(with: magicVersion1) { return try decodeVersion1(&r) }
        let version4 = bytes.starts(with: magicVersion4)
        let version3 = version4 || bytes.starts(with: magic)
        guard version3 || bytes.starts(with: magicVersion2) else { throw r.damage("not a PushBridge record") }
        r.offset = magic.count
        var rows: [(name: String, devices: [Device])] = []
        var skipped = Int.max
        if version4 {
            let id = try r.varint()
            guard id <= UInt64(Int64.max), let stored = try roll(Int64(id)) else { throw r.damage("its receiver roll \(id) is not stored") }
            rows = try decodeRoll(stored, id: id)
            let left = try r.varint()
            if left > 0 {
                guard left <= UInt64(rows.count) else { throw r.damage("row \(left - 1) left out of a roll of \(rows.count)") }
                skipped = Int(left - 1)
            }
        }
        let count = try r.count(of: r.varint())
        if version4 && count != rows.count - (skipped == Int.max ? 0 : 1) { throw r.damage("\(count) decisions for a roll of \(rows.count) rows") }
        var out: [ReceiverDecision] = []
        out.reserveCapacity(count)
        var previous: [UInt8] = []
        var certificates: [Certificate] = []
        var templates: [PayloadTemplate] = []
        for index in 0..<count {
            let row = index < skipped ? index : index + 1
            let receiver = version4 ? rows[row].name : try r.string(length: r.varint())
            let body: FanOutRequest.Body
            switch (try r.byte(), version3) {
            case (0, true):
                let code = Int(try r.byte())
                guard code < reasons.count else { throw r.damage("reason \(code) of \(receiver)") }
                out.append(ReceiverDecision(receiver: receiver, decision: .suppressed(reasons[code])))
                continue
            case (0, false):
                out.append(try r.suppressed(receiver, reason: r.string(length: r.varint())))
                continue
            case (1, _):
                previous = try r.difference(from: previous)
                body = .bytes(previous)
            case (2, true):
                let number = try r.varint()
                if number == UInt64(templates.count) {
                    let bytes = Array(try r.take(r.count(of: r.varint())))
                    guard let template = PayloadTemplate.checked(bytes: bytes, badge: try r.mark(), receiver: try r.mark()) else {
                        throw r.damage("template \(number) of \(receiver)")
                    }
                    templates.append(template)
                }
                guard number < UInt64(templates.count) else { throw r.damage("template \(number) of \(receiver)") }
                let template = templates[Int(number)]
                let badge = template.badge == nil ? 0 : Int(try r.signed())
                var patched = receiver
                if template.receiver != nil, case let length = try r.varint(), length > 0 { patched = try r.string(length: length - 1) }
                body = .patched(template, badge: badge, receiver: patched)
            default:
                throw r.damage("a decision of \(receiver) that is neither pushed nor suppressed")
            }
            let badge = Int(try r.signed())
            var deliveryCount = try r.count(of: r.varint())
            if version4 {
                if deliveryCount == 0 {  // the row's own devices
                    out.append(ReceiverDecision(
                        receiver: receiver, fanOut: .push(FanOutRequest(body: body, targets: .devices(rows[row].devices), badgeCounter: badge))))
                    continue
                }
                deliveryCount -= 1
            }
            var devices: [Device] = []
            devices.reserveCapacity(deliveryCount)
            var deliveries: [APNsDelivery]?  // only when some headers are not the standard ones
            for _ in 0..<deliveryCount {
                let token = version3 ? try r.token() : try r.string(length: r.varint())
                let device = try r.device(token: token, certificates: &certificates, of: receiver)
                switch try r.byte() {
                case 0:
                    devices.append(device)
                    deliveries?.append(APNsDelivery(device: device))
                case 1:
                    var headers: [(name: String, value: String)] = []
                    for _ in 0..<(try r.count(of: r.varint())) { headers.append((try r.string(length: r.varint()), try r.string(length: r.varint()))) }
                    if deliveries == nil { deliveries = devices.map(APNsDelivery.init(device:)) }
                    devices.append(device)
                    deliveries?.append(APNsDelivery(device: device, headers: headers))
                default: throw r.damage("a headers marker of \(receiver)")
                }
            }
            let targets: FanOutRequest.Targets = deliveries.map { .deliveries($0) } ?? .devices(devices)
            out.append(ReceiverDecision(receiver: receiver, fanOut: .push(FanOutRequest(body: body, targets: targets, badgeCounter: badge))))
        }
        guard r.offset == bytes.count else { throw r.damage("bytes after the last decision") }
        return out
    }

    /// Reads a `PBL1` roll: each row's name and devices.
    package static func decodeRoll(_ bytes: [UInt8], id: UInt64) throws(RecordDamage) -> [(name: String, devices: [Device])] {
        var r = RecordReader(bytes: bytes)
        guard bytes.starts(with: rollMagic) else { throw r.damage("its receiver roll \(id) is not a PushBridge roll") }
        r.offset = rollMagic.count
        let count = try r.count(of: r.varint())
        var rows: [(name: String, devices: [Device])] = []
        rows.reserveCapacity(count)
        var certificates: [Certificate] = []
        for _ in 0..<count {
            let name = try r.string(length: r.varint())
            let deviceCount = try r.count(of: r.varint())
            var devices: [Device] = []
            devices.reserveCapacity(deviceCount)
            for _ in 0..<deviceCount {
                let token = try r.token()
                devices.append(try r.device(token: token, certificates: &certificates, of: name))
            }
            rows.append((name, devices))
        }
        guard r.offset == bytes.count else { throw r.damage("bytes after the last row of its receiver roll \(id)") }
        return rows
    }

    /// Reads a `PBR1` record (fixed-width integers, payloads and headers in full).
    private static func decodeVersion1(_ r: inout RecordReader) throws(RecordDamage) -> [ReceiverDecision] {
        r.offset = magicVersion1.count
        let count = try r.count(of: r.fixed())
        var out: [ReceiverDecision] = []
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
                    guard let environment = APNsEnvironment(rawValue: environmentWord) else { throw r.damage("environment of \(receiver)") }
                    let certificate = Certificate(
                        name: try r.optional { r throws(RecordDamage) in try r.length32() }, busiId: try r.optional { r throws(RecordDamage) in try r.length32() }, bundleId: bundleId,
                        environment: environment)
                    let device = Device(token: token, certificate: certificate, boundAt: Instant(milliseconds: Int64(bitPattern: try r.fixed())))
                    var headers: [(name: String, value: String)] = []
                    for _ in 0..<(try r.count(of: r.fixed())) { headers.append((try r.string(length: r.length32()), try r.string(length: r.length32()))) }
                    deliveries.append(APNsDelivery(device: device, headers: headers))
                }
                out.append(ReceiverDecision(receiver: receiver, decision: .push(APNsRequest(payload: payload, deliveries: deliveries, badgeCounter: badge))))
            default:
                throw r.damage("a decision of \(receiver) that is neither pushed nor suppressed")
            }
        }
        guard r.offset == r.bytes.count else { throw r.damage("bytes after the last decision") }
        return out
    }
}
