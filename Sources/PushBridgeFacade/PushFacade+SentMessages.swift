import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

/// The record a sent message leaves behind, so that a repeated send returns the same decisions
/// byte for byte and changes no counter (SPEC §10).
///
/// A compact binary form, because a group send writes one for every receiver in its transaction.
/// `PBR3` (written since 0.12): the magic, the number of decisions, then per decision its receiver
/// and one of
/// - `0` + the reason's code (``reasons``);
/// - `1` + the payload as its difference from the previous payload written this way (the length of
///   the common prefix, of the common suffix, and the bytes between): payloads written for one
///   receiver alone (shortened) or the same for every receiver;
/// - `2` + a template's number (a template's bytes and the places of the badge digits and the
///   receiver's id follow its first use), the badge written in (when the template has a place for
///   it) and the receiver's id written in (`0`: the decision's own receiver, else its length + 1 and
///   its bytes) — a class's payload shared by its receivers, written once;
///
/// then, for `1` and `2`, the badge counter and the deliveries: each its token (a lower-case hex
/// token as its bytes: the length × 2 + 1, then the bytes; any other as its length × 2, then the
/// text), its certificate (a number; a certificate's fields follow its first use), its binding
/// time and `0` for the standard headers or `1` and their names and values.
/// Counts and lengths are LEB128 varints, signed integers zigzag varints.
///
/// `PBR4` (since 0.14) is the record of a send to a kept group, whose receivers' names and devices
/// are a stored roll (``PushStateTransaction/storeRoll(_:usedAt:encoded:)``): the magic, the roll's
/// id, the row left out + 1 (`0`: none), the number of decisions, then per decision what `PBR3`
/// writes without its receiver (decision `i` is the roll's row `i`, or `i + 1` from the row left
/// out on), the deliveries written as `0` for the row's own devices with the standard headers, or
/// their count + 1 and each as in `PBR3`. The roll (`PBL1`): the magic, the number of rows, then
/// per row its name, its number of devices and each device as in `PBR3` (its own certificate numbers).
///
/// `PBR2` (0.10–0.11: every
/// payload as a difference, tokens as text, reasons as words) and `PBR1` (0.9: fixed widths,
/// every payload and header in full) records are still read.
enum SentMessageRecord {
    static let magic: [UInt8] = Array("PBR3".utf8)
    static let magicVersion4: [UInt8] = Array("PBR4".utf8)
    static let rollMagic: [UInt8] = Array("PBL1".utf8)
    static let magicVersion2: [UInt8] = Array("PBR2".utf8)
    static let magicVersion1: [UInt8] = Array("PBR1".utf8)
    /// A suppression reason's code is its place here (new reasons go at the end).
    static let reasons: [SuppressionReason] = [
        .online, .noDevice, .ignored, .emptyContent, .doNotDisturb, .muted, .notMentioned, .payloadTooLarge,
    ]

    /// A stored roll that a record's decisions are the rows of.
    struct RollReference {
        /// The stored roll's id.
        var id: Int64
        /// Every row of the roll, the one left out too.
        var rows: [StoredReceiver]
        /// The row left out (the sender), if any.
        var skipped: Int?
    }

    /// The `PBL1` bytes of a roll's rows: each row's name and devices.
    static func encodeRoll(_ rows: [StoredReceiver]) -> [UInt8] {
        var out = Writer()
        out.bytes.reserveCapacity(16 + rows.count * 56)
        out.bytes += rollMagic
        out.varint(UInt64(rows.count))
        var certificates = Numbering<Certificate>()
        rows.withUnsafeBufferPointer { rows in
            for row in rows.indices {
                out.string(rows[row].state.user)
                out.varint(UInt64(rows[row].state.devices.count))
                rows[row].state.devices.withUnsafeBufferPointer { devices in
                    for i in devices.indices { out.device(devices[i], certificates: &certificates) }
                }
            }
        }
        return out.bytes
    }

    /// A record of decisions: `PBR4`, referring to `roll` for the receivers' names and devices,
    /// when given and every decision's receiver is its row's; else `PBR3`.
    static func encode(_ decisions: [PushFacade.ReceiverDecision], roll: RollReference? = nil) -> [UInt8] {
        if let roll, decisions.count == roll.rows.count - (roll.skipped == nil ? 0 : 1) {
            var writer = DecisionWriter(version4: true, capacity: decisions.count)
            let skipped = roll.skipped ?? Int.max
            for index in decisions.indices {
                writer.append(decisions[index].decision, receiver: decisions[index].receiver, row: roll.rows[index < skipped ? index : index + 1].state)
            }
            if writer.matchesRows { return writer.record(count: decisions.count, roll: (roll.id, roll.skipped)) }
        }
        var writer = DecisionWriter(version4: false, capacity: decisions.count)
        for index in decisions.indices { writer.append(decisions[index].decision, receiver: decisions[index].receiver, row: nil) }
        return writer.record(count: decisions.count, roll: nil)
    }

    /// Writes a record's decisions one by one, as they are made: a group send writes each
    /// receiver's while its row is at hand, rather than reading all the rows again afterwards.
    struct DecisionWriter {
        /// `PBR4` (decisions are a roll's rows, written without their receivers) or `PBR3`.
        let version4: Bool
        /// Whether every decision appended to a `PBR4` record was its row's receiver's: the record
        /// is right only then (else nothing more is written, and the record is to be `PBR3`).
        private(set) var matchesRows = true
        private var out = Writer()
        private var previous: [UInt8] = []
        private var templates = Numbering<ObjectIdentifier>()
        private var certificates = Numbering<Certificate>()

        /// Whether a request whose devices are a kept row's (`Targets.row`) refers to the very row it
        /// is appended with: a send writing its record as it decides its kept rows.
        let rowTargetsAreRows: Bool

        /// - Parameters:
        ///   - version4: whether the decisions are a roll's rows, in order (``append(_:receiver:row:)`` gives each row).
        ///   - capacity: the number of decisions expected.
        ///   - rowTargetsAreRows: whether a decision that refers to a kept row's devices is appended
        ///     with that row (its devices are then the row's without comparing them).
        init(version4: Bool, capacity: Int, rowTargetsAreRows: Bool = false) {
            self.version4 = version4
            self.rowTargetsAreRows = rowTargetsAreRows
            out.bytes.reserveCapacity(capacity * (version4 ? 6 : 48))
        }

        /// Appends the next decision.
        /// - Parameters:
        ///   - decision: the decision.
        ///   - receiver: its receiver.
        ///   - row: in a `PBR4` record, the state of the decision's row: its name must be the
        ///     receiver's, and the decision's devices are written only when they differ from its
        ///     devices; `nil` in `PBR3`.
        mutating func append(_ decision: PushDecision, receiver: String, row: UserState?) {
            if version4 {
                guard matchesRows, let row, row.user == receiver else { return matchesRows = false }
            } else {
                out.string(receiver)
            }
            switch decision {
            case .suppressed(let reason):
                out.bytes.append(0)
                out.bytes.append(UInt8(reasons.firstIndex(of: reason)!))
            case .push(let request):
                switch request.body {
                case .bytes(let payload):
                    out.bytes.append(1)
                    out.difference(payload, from: previous)
                    previous = payload
                case .patched(let template, let badge, let patchedReceiver):
                    out.bytes.append(2)
                    let (number, isNew) = templates.number(of: ObjectIdentifier(template))
                    out.varint(UInt64(number))
                    if isNew {
                        out.run(template.bytes)
                        out.mark(template.badge)
                        out.mark(template.receiver)
                    }
                    if template.badge != nil { out.signed(Int64(badge)) }
                    if template.receiver != nil {
                        if patchedReceiver == receiver {
                            out.bytes.append(0)
                        } else {
                            out.varint(UInt64(patchedReceiver.utf8.count) + 1)
                            out.bytes += patchedReceiver.utf8
                        }
                    }
                }
                out.signed(Int64(request.badgeCounter))
                if version4 {
                    if case .row = request.targets, rowTargetsAreRows {
                        out.bytes.append(0)  // the row's own devices, standard headers
                        return
                    }
                    if let devices = request.targets.standardDevices, let row, SentMessageRecord.same(devices, row.devices) {
                        out.bytes.append(0)  // the row's own devices, standard headers
                        return
                    }
                    out.varint(UInt64(request.deliveryCount) + 1)
                } else {
                    out.varint(UInt64(request.deliveryCount))
                }
                switch request.targets {
                case .devices, .row:
                    request.targets.standardDevices!.withUnsafeBufferPointer { devices in  // borrowed: no copy of each device
                        for i in devices.indices {
                            out.device(devices[i], certificates: &certificates)
                            out.bytes.append(0)
                        }
                    }
                case .deliveries(let deliveries):
                    for delivery in deliveries {
                        out.device(delivery.device, certificates: &certificates)
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
        }

        /// The record: its header, then the decisions appended.
        /// - Parameters:
        ///   - count: the number of decisions appended.
        ///   - roll: for `PBR4`, the stored roll's id and the row left out, if any.
        func record(count: Int, roll: (id: Int64, skipped: Int?)?) -> [UInt8] {
            var header = Writer()
            if version4, let roll {
                header.bytes += magicVersion4
                header.varint(UInt64(roll.id))
                header.varint(roll.skipped.map { UInt64($0) + 1 } ?? 0)
            } else {
                precondition(!version4, "a PBR4 record refers to a roll")
                header.bytes += magic
            }
            header.varint(UInt64(count))
            header.bytes.reserveCapacity(header.bytes.count + out.bytes.count)
            header.bytes += out.bytes
            return header.bytes
        }
    }

    /// Whether two device lists are equal: at once when they share their storage (a decision's
    /// devices are its row's), else compared.
    static func same(_ a: [Device], _ b: [Device]) -> Bool {
        let shared = a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress && a.count == b.count } }
        return shared || a == b
    }

    /// Numbers for the templates or certificates of one record, in order of first use (a thing's
    /// fields are written at its first use only).
    struct Numbering<Key: Hashable> {
        /// The keys in number order; found by a scan while few (a record has one to three
        /// certificates and templates: no hashing), by `numbers` past `scanned`.
        private var keys: [Key] = []
        private var numbers: [Key: Int] = [:]
        private var last = -1  // receivers mostly share the one before
        private static var scanned: Int { 8 }

        /// The number of `key`, and whether this is its first use.
        mutating func number(of key: Key) -> (number: Int, isNew: Bool) {
            // Compared where it is kept, not copied out (a certificate's copy retains its strings).
            if last >= 0 && keys.withUnsafeBufferPointer({ $0[last] == key }) { return (last, false) }
            if let number = keys.count <= Self.scanned ? keys.firstIndex(of: key) : numbers[key] {
                last = number
                return (number, false)
            }
            let number = keys.count
            keys.append(key)
            if keys.count > Self.scanned {
                if numbers.isEmpty { for (n, key) in keys.enumerated() { numbers[key] = n } } else { numbers[key] = number }
            }
            last = number
            return (number, true)
        }
    }

    /// Reads a record back; a record PushBridge did not write is a store failure.
    /// - Parameters:
    ///   - bytes: the record.
    ///   - messageID: its message id (for errors).
    ///   - roll: a stored roll's bytes by id, for a `PBR4` record (`nil`: no such roll).
    static func decode(_ bytes: [UInt8], messageID: String, roll: (Int64) throws -> [UInt8]? = { _ in nil }) throws -> [PushFacade.ReceiverDecision] {
        var r = Reader(bytes: bytes, messageID: messageID)
        if bytes.starts(with: magicVersion1) { return try decodeVersion1(&r) }
        let version4 = bytes.starts(with: magicVersion4)
        let version3 = version4 || bytes.starts(with: magic)
        guard version3 || bytes.starts(with: magicVersion2) else { throw r.broken("not a PushBridge record") }
        r.offset = magic.count
        var rows: [(name: String, devices: [Device])] = []
        var skipped = Int.max
        if version4 {
            let id = try r.varint()
            guard id <= UInt64(Int64.max), let stored = try roll(Int64(id)) else { throw r.broken("its receiver roll \(id) is not stored") }
            rows = try decodeRoll(stored, id: id, messageID: messageID)
            let left = try r.varint()
            if left > 0 {
                guard left <= UInt64(rows.count) else { throw r.broken("row \(left - 1) left out of a roll of \(rows.count)") }
                skipped = Int(left - 1)
            }
        }
        let count = try r.count(of: r.varint())
        if version4 && count != rows.count - (skipped == Int.max ? 0 : 1) { throw r.broken("\(count) decisions for a roll of \(rows.count) rows") }
        var out: [PushFacade.ReceiverDecision] = []
        out.reserveCapacity(count)
        var previous: [UInt8] = []
        var certificates: [Certificate] = []
        var templates: [PayloadTemplate] = []
        for index in 0..<count {
            let row = index < skipped ? index : index + 1
            let receiver = version4 ? rows[row].name : try r.string(length: r.varint())
            let body: APNsRequest.Body
            switch (try r.byte(), version3) {
            case (0, true):
                let code = Int(try r.byte())
                guard code < reasons.count else { throw r.broken("reason \(code) of \(receiver)") }
                out.append(PushFacade.ReceiverDecision(receiver: receiver, decision: .suppressed(reasons[code])))
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
                        throw r.broken("template \(number) of \(receiver)")
                    }
                    templates.append(template)
                }
                guard number < UInt64(templates.count) else { throw r.broken("template \(number) of \(receiver)") }
                let template = templates[Int(number)]
                let badge = template.badge == nil ? 0 : Int(try r.signed())
                var patched = receiver
                if template.receiver != nil, case let length = try r.varint(), length > 0 { patched = try r.string(length: length - 1) }
                body = .patched(template, badge: badge, receiver: patched)
            default:
                throw r.broken("a decision of \(receiver) that is neither pushed nor suppressed")
            }
            let badge = Int(try r.signed())
            var deliveryCount = try r.count(of: r.varint())
            if version4 {
                if deliveryCount == 0 {  // the row's own devices
                    out.append(PushFacade.ReceiverDecision(
                        receiver: receiver, decision: .push(APNsRequest(body: body, targets: .devices(rows[row].devices), badgeCounter: badge))))
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
                default: throw r.broken("a headers marker of \(receiver)")
                }
            }
            let targets: APNsRequest.Targets = deliveries.map { .deliveries($0) } ?? .devices(devices)
            out.append(PushFacade.ReceiverDecision(receiver: receiver, decision: .push(APNsRequest(body: body, targets: targets, badgeCounter: badge))))
        }
        guard r.offset == bytes.count else { throw r.broken("bytes after the last decision") }
        return out
    }

    /// Reads a `PBL1` roll: each row's name and devices.
    static func decodeRoll(_ bytes: [UInt8], id: UInt64, messageID: String) throws -> [(name: String, devices: [Device])] {
        var r = Reader(bytes: bytes, messageID: messageID)
        guard bytes.starts(with: rollMagic) else { throw r.broken("its receiver roll \(id) is not a PushBridge roll") }
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
        guard r.offset == bytes.count else { throw r.broken("bytes after the last row of its receiver roll \(id)") }
        return rows
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

        /// A place in a template: `0` for none, else its start + 1 and its length.
        mutating func mark(_ range: Range<Int>?) {
            guard let range else { return bytes.append(0) }
            varint(UInt64(range.lowerBound) + 1)
            varint(UInt64(range.count))
        }

        /// A device token: a lower-case hex token packed into its bytes, any other as text.
        mutating func token(_ token: String) {
            var token = token
            token.withUTF8 { text in
                let packed = text.count / 2
                if packed > 0 && text.count % 2 == 0, let digits = text.baseAddress {
                    let start = bytes.count
                    varint(UInt64(packed) << 1 | 1)
                    let isHex = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: packed) { out -> Bool in
                        guard let out = out.baseAddress else { return false }
                        var invalid: UInt8 = 0
                        for i in 0..<packed {
                            let (high, highInvalid) = Self.nibble(digits[2 &* i])
                            let (low, lowInvalid) = Self.nibble(digits[2 &* i &+ 1])
                            invalid |= highInvalid | lowInvalid
                            out[i] = high &<< 4 | low
                        }
                        guard invalid == 0 else { return false }
                        bytes.append(contentsOf: UnsafeBufferPointer(start: out, count: packed))
                        return true
                    }
                    if isHex { return }
                    bytes.removeSubrange(start...)
                }
                varint(UInt64(text.count) << 1)
                bytes.append(contentsOf: text)
            }
        }

        /// A lower-case hex digit's value, and a non-zero mark when the byte is not one.
        @inline(__always)
        static func nibble(_ digit: UInt8) -> (value: UInt8, invalid: UInt8) {
            let decimal = digit &- 0x30, letter = digit &- 0x61
            if decimal < 10 { return (decimal, 0) }
            if letter < 6 { return (letter &+ 10, 0) }
            return (0, 1)
        }

        /// A device: its token, its certificate's number (the fields at its first use) and its binding time.
        mutating func device(_ device: Device, certificates: inout Numbering<Certificate>) {
            token(device.token)
            let (number, isNew) = certificates.number(of: device.certificate)
            varint(UInt64(number))
            if isNew {
                optional(device.certificate.name)
                optional(device.certificate.busiId)
                string(device.certificate.bundleId)
                string(device.certificate.environment.rawValue)
            }
            signed(device.boundAt.milliseconds)
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

        /// The rest of a device written by ``Writer/device(_:certificates:)``, its token read.
        mutating func device(token: String, certificates: inout [Certificate], of receiver: String) throws -> Device {
            let number = try varint()
            if number == UInt64(certificates.count) {
                let name = try optional { try $0.varint() }
                let busiId = try optional { try $0.varint() }
                let bundleId = try string(length: varint())
                let environmentWord = try string(length: varint())
                guard let environment = APNsEnvironment(rawValue: environmentWord) else { throw broken("environment of \(receiver)") }
                certificates.append(Certificate(name: name, busiId: busiId, bundleId: bundleId, environment: environment))
            }
            guard number < UInt64(certificates.count) else { throw broken("certificate \(number) of \(receiver)") }
            return Device(token: token, certificate: certificates[Int(number)], boundAt: Instant(milliseconds: try signed()))
        }

        /// A place in a template written by ``Writer/mark(_:)``.
        mutating func mark() throws -> Range<Int>? {
            let start = try varint()
            guard start > 0 else { return nil }
            let length = try varint()
            guard start - 1 <= UInt64(bytes.count), length <= UInt64(bytes.count) else { throw broken("a place in a template") }
            return Int(start - 1)..<Int(start - 1 + length)
        }

        /// A device token written by ``Writer/token(_:)``.
        mutating func token() throws -> String {
            let header = try varint()
            let raw = try take(count(of: header >> 1))
            if header & 1 == 0 {
                guard let text = String(validating: raw, as: UTF8.self) else { throw broken("a token that is not UTF-8") }
                return text
            }
            let digits: [UInt8] = Array("0123456789abcdef".utf8)
            return String(unsafeUninitializedCapacity: raw.count * 2) { buffer in
                var i = 0
                for b in raw {
                    buffer[i] = digits[Int(b >> 4)]
                    buffer[i + 1] = digits[Int(b & 0x0f)]
                    i += 2
                }
                return i
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
