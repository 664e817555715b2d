import PushBridgeJSON

/// Why a message is not pushed. The names are part of the fixture contract.
public enum SuppressionReason: String, Hashable, Sendable, CaseIterable {
    /// The receiver holds a live connection.
    case online
    /// The receiver has no registered device.
    case noDevice = "no-device"
    /// The message asks for no push (`em_ignore_notification`, `pushFlag` 1).
    case ignored
    /// There is nothing to display.
    case emptyContent = "empty-content"
    /// A do-not-disturb window or duration is active.
    case doNotDisturb = "do-not-disturb"
    /// The effective remind type is `None`.
    case muted
    /// The effective remind type is `MentionOnly` and the receiver is not mentioned.
    case notMentioned = "not-mentioned"
    /// Even shortened, the payload does not fit in 4096 bytes.
    case payloadTooLarge = "payload-too-large"
}

/// What one push sends: one payload for the receiver, delivered to each of the receiver's devices.
///
/// A fan-out's receivers mostly share one written payload and differ only in the badge digits (and,
/// in the Easemob profile, the receiver's id), so a request may hold its payload as a shared
/// `PayloadTemplate` plus those values, and its devices without their (standard) headers. Both
/// are written out when ``payload`` and ``deliveries`` are read; equality and hashing are those of
/// the bytes and deliveries, however they are held.
public struct APNsRequest: Hashable, Sendable {
    /// How the payload is held: its bytes, or a class's template with one receiver's values.
    package enum Body: Sendable {
        case bytes([UInt8])
        case patched(PayloadTemplate, badge: Int, receiver: String)

        /// The payload's bytes (a patched payload written out).
        package var written: [UInt8] {
            switch self {
            case .bytes(let bytes): return bytes
            case .patched(let template, let badge, let receiver): return template.payload(badge: badge, receiver: receiver)
            }
        }
    }

    /// How the deliveries are held: in full, as devices that all take the standard headers, or as
    /// the devices of a row kept elsewhere (a store's kept group), with the standard headers.
    package enum Targets: Sendable {
        case deliveries([APNsDelivery])
        case devices([Device])
        case row(DeviceRows, Int)

        /// The devices, when they all take the standard headers.
        package var standardDevices: [Device]? {
            switch self {
            case .deliveries: return nil
            case .devices(let devices): return devices
            case .row(let rows, let row): return rows.devices(ofRow: row)
            }
        }
    }

    package private(set) var body: Body
    package private(set) var targets: Targets
    /// The receiver's badge counter after this push.
    public var badgeCounter: Int

    /// - Parameters:
    ///   - payload: the payload bytes.
    ///   - deliveries: one per device, newest binding first (never empty).
    ///   - badgeCounter: the counter after this push.
    public init(payload: [UInt8], deliveries: [APNsDelivery], badgeCounter: Int) {
        self.body = .bytes(payload)
        self.targets = .deliveries(deliveries)
        self.badgeCounter = badgeCounter
    }

    /// A request as a prepared push or a repeat record holds it.
    /// - Parameters:
    ///   - body: the payload.
    ///   - targets: the deliveries.
    ///   - badgeCounter: the counter after this push.
    package init(body: Body, targets: Targets, badgeCounter: Int) {
        self.body = body
        self.targets = targets
        self.badgeCounter = badgeCounter
    }

    /// The exact payload, compact UTF-8 JSON of at most ``PayloadRenderer/maximumPayloadBytes``; the
    /// same bytes go to every device (one badge counter per user).
    public var payload: [UInt8] {
        get { body.written }
        set { body = .bytes(newValue) }
    }

    /// One APNs request per device, newest binding first.
    public var deliveries: [APNsDelivery] {
        get {
            switch targets {
            case .deliveries(let deliveries): return deliveries
            case .devices(let devices): return devices.map(APNsDelivery.init(device:))
            case .row(let rows, let row): return rows.devices(ofRow: row).map(APNsDelivery.init(device:))
            }
        }
        set { targets = .deliveries(newValue) }
    }

    /// The number of deliveries (without writing them out).
    public var deliveryCount: Int {
        switch targets {
        case .deliveries(let deliveries): return deliveries.count
        case .devices(let devices): return devices.count
        case .row(let rows, let row): return rows.devices(ofRow: row).count
        }
    }

    /// The payload's size in bytes (without writing it out).
    public var payloadSize: Int {
        switch body {
        case .bytes(let bytes): return bytes.count
        case .patched(let template, let badge, let receiver): return template.size(badge: badge, receiver: receiver)
        }
    }

    /// Appends the payload to `w` (a patched payload is written there directly).
    /// - Parameter w: the writer.
    public func writePayload(into w: inout JSONWriter) {
        switch body {
        case .bytes(let bytes): w.raw(bytes)
        case .patched(let template, let badge, let receiver): template.write(badge: badge, receiver: receiver, into: &w)
        }
    }

    public var payloadText: String { String(decoding: payload, as: UTF8.self) }

    public static func == (lhs: APNsRequest, rhs: APNsRequest) -> Bool {
        guard lhs.badgeCounter == rhs.badgeCounter else { return false }
        switch (lhs.body, rhs.body) {
        case (.bytes(let a), .bytes(let b)):
            guard a == b else { return false }
        case (.patched(let a, let badgeA, let receiverA), .patched(let b, let badgeB, let receiverB))
            where a === b && badgeA == badgeB && receiverA == receiverB:
            break
        default:
            guard lhs.payload == rhs.payload else { return false }
        }
        if let a = lhs.targets.standardDevices, let b = rhs.targets.standardDevices { return a == b }
        return lhs.deliveries == rhs.deliveries
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(payload)
        hasher.combine(deliveries)
        hasher.combine(badgeCounter)
    }
}

/// Receivers' device lists kept by their owner (a store's kept group, in row order), which the
/// requests of a send to them refer to by row: one reference shared by the whole send, instead of
/// each request taking a reference to its receiver's list (a cache miss on a 100,000-member send's
/// every list, then another when the decisions are freed).
package final class DeviceRows: Sendable {
    private let devicesOfRow: @Sendable (Int) -> [Device]

    /// - Parameter devicesOfRow: the devices of a row, newest binding first.
    package init(_ devicesOfRow: @escaping @Sendable (Int) -> [Device]) {
        self.devicesOfRow = devicesOfRow
    }

    /// The devices of row `row`, newest binding first.
    package func devices(ofRow row: Int) -> [Device] { devicesOfRow(row) }
}

/// A payload written once for a render class, with where its receiver's badge digits and id are:
/// another receiver's payload is the same bytes with its own values written there.
///
/// Not final: a prepared push's render class is one (``PreparedPush/Template``), so that a class and
/// its payload are one object. Unchecked `Sendable`: every stored property is a `let` of a `Sendable` type.
package class PayloadTemplate: @unchecked Sendable {
    package let bytes: [UInt8]
    /// The badge digits (`nil`: no per-receiver badge).
    package let badge: Range<Int>?
    /// The receiver's id, quotes included (`nil`: the profile writes none).
    package let receiver: Range<Int>?
    /// The badge value and receiver id the bytes were written with (`nil`: not known, as for a
    /// template read back from storage): that receiver's payload is `bytes` as they are.
    let writtenFor: (badge: Int, receiver: String)?

    /// - Parameters:
    ///   - bytes: the payload as written for one receiver.
    ///   - badge: where its badge digits are.
    ///   - receiver: where its receiver's id literal is (after `badge`).
    ///   - writtenFor: the badge value and receiver id written there, when known.
    package init(bytes: [UInt8], badge: Range<Int>?, receiver: Range<Int>?, writtenFor: (badge: Int, receiver: String)? = nil) {
        self.bytes = bytes
        self.badge = badge
        self.receiver = receiver
        self.writtenFor = writtenFor
    }

    /// Whether one receiver's payload is `bytes` as they are (no digits or id to replace).
    @inline(__always)
    func isAsWritten(badge value: Int, receiver user: String) -> Bool {
        if isFixed { return true }
        guard let writtenFor else { return false }
        return (badge == nil || writtenFor.badge == value) && (receiver == nil || writtenFor.receiver == user)
    }

    /// A template read back from storage: `nil` when the marks are out of order or outside the bytes.
    package static func checked(bytes: [UInt8], badge: Range<Int>?, receiver: Range<Int>?) -> PayloadTemplate? {
        if let badge, badge.lowerBound < 0 || badge.upperBound > bytes.count { return nil }
        if let receiver, receiver.lowerBound < (badge?.upperBound ?? 0) || receiver.upperBound > bytes.count { return nil }
        return PayloadTemplate(bytes: bytes, badge: badge, receiver: receiver)
    }

    /// Whether every receiver gets the same bytes.
    package var isFixed: Bool { badge == nil && receiver == nil }

    /// The size of one receiver's payload.
    package func size(badge value: Int, receiver user: String) -> Int {
        if isAsWritten(badge: value, receiver: user) { return bytes.count }
        var size = bytes.count
        if let badge { size += JSONWriter.decimalLength(of: value) - badge.count }
        if let receiver { size += JSONWriter.encodedLength(ofString: user) - receiver.count }
        return size
    }

    /// Whether one receiver's payload is at most `limit` bytes (exact only when it is close).
    package func fits(badge value: Int, receiver user: String, limit: Int) -> Bool {
        // At most 20 digits and a sign; at most 6 bytes for each byte of the id, and the quotes.
        if bytes.count + 21 + 6 * user.utf8.count + 2 <= limit { return true }
        return size(badge: value, receiver: user) <= limit
    }

    /// One receiver's payload.
    package func payload(badge value: Int, receiver user: String) -> [UInt8] {
        if isAsWritten(badge: value, receiver: user) { return bytes }
        if let patched = patched(badge: value, receiver: user) { return patched }
        var w = JSONWriter(capacity: size(badge: value, receiver: user))
        write(badge: value, receiver: user, into: &w)
        return w.bytes
    }

    /// One receiver's payload as one array of its exact size: the template's bytes around the
    /// receiver's badge digits and id (`nil` when the id needs escapes: then it is written). The
    /// pieces are put together in a scratch buffer (on the stack when small), then copied once.
    func patched(badge value: Int, receiver user: String) -> [UInt8]? {
        var user = user
        return user.withUTF8 { id -> [UInt8]? in
            if receiver != nil && !JSONWriter.isPlain(id) { return nil }
            let digits = JSONWriter.decimalLength(of: value)
            let size = bytes.count + (badge.map { digits - $0.count } ?? 0) + (receiver.map { id.count + 2 - $0.count } ?? 0)
            return bytes.withUnsafeBufferPointer { written in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { scratch in
                    var p = scratch.baseAddress!
                    func put(_ piece: UnsafeBufferPointer<UInt8>) {
                        guard let from = piece.baseAddress else { return }
                        p.update(from: from, count: piece.count)
                        p += piece.count
                    }
                    var from = 0
                    if let badge {
                        put(UnsafeBufferPointer(rebasing: written[from..<badge.lowerBound]))
                        JSONWriter.writeDecimal(value, length: digits, to: p)
                        p += digits
                        from = badge.upperBound
                    }
                    if let receiver {
                        put(UnsafeBufferPointer(rebasing: written[from..<receiver.lowerBound]))
                        p.pointee = 0x22
                        p += 1
                        put(id)
                        p.pointee = 0x22
                        p += 1
                        from = receiver.upperBound
                    }
                    put(UnsafeBufferPointer(rebasing: written[from...]))
                    precondition(p == scratch.baseAddress! + size, "a patched payload's size")
                    return Array(scratch)
                }
            }
        }
    }

    /// Appends one receiver's payload to `w`.
    package func write(badge value: Int, receiver user: String, into w: inout JSONWriter) {
        if isAsWritten(badge: value, receiver: user) { return w.raw(bytes) }
        var from = 0
        if let badge {
            w.raw(bytes[from..<badge.lowerBound])
            w.integer(value)
            from = badge.upperBound
        }
        if let receiver {
            w.raw(bytes[from..<receiver.lowerBound])
            w.string(user)
            from = receiver.upperBound
        }
        w.raw(bytes[from...])
    }
}

/// One device a push goes to, with the request headers for its certificate.
public struct APNsDelivery: Hashable, Sendable {
    public var device: Device
    /// Headers other than the standard ones, when a caller gave them (`nil`: the standard headers,
    /// made when asked for rather than stored with every push).
    private var otherHeaders: [(name: String, value: String)]?

    /// Header names and values, in a fixed order (the `apns-topic` is the device certificate's bundle id).
    public var headers: [(name: String, value: String)] {
        get { otherHeaders ?? PayloadRenderer.headers(for: device) }
        set { otherHeaders = newValue }
    }

    /// Whether the headers are the standard ones for the device (``PayloadRenderer/headers(for:)``).
    public var hasStandardHeaders: Bool { otherHeaders == nil }

    /// - Parameters:
    ///   - device: the device.
    ///   - headers: its request headers.
    public init(device: Device, headers: [(name: String, value: String)]) {
        self.device = device
        let standard = PayloadRenderer.headers(for: device)
        let isStandard = headers.elementsEqual(standard) { $0.name == $1.name && $0.value == $1.value }
        self.otherHeaders = isStandard ? nil : headers
    }

    /// A delivery to a device with the standard headers (``PayloadRenderer/headers(for:)``).
    /// - Parameter device: the device.
    public init(device: Device) {
        self.device = device
        self.otherHeaders = nil
    }

    public static func == (lhs: APNsDelivery, rhs: APNsDelivery) -> Bool {
        lhs.device == rhs.device && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(device)
        for header in headers {
            hasher.combine(header.name)
            hasher.combine(header.value)
        }
    }
}

/// Whether a message is pushed to one receiver, and what exactly is sent or why not.
public enum PushDecision: Hashable, Sendable {
    case push(APNsRequest)
    case suppressed(SuppressionReason)

    /// The decision a render gives: its payload to each of the receiver's devices, or too large.
    static func rendered(_ outcome: PayloadRenderer.Outcome, to receiver: UserState) -> PushDecision {
        switch outcome {
        case .tooLarge:
            return .suppressed(.payloadTooLarge)
        case .payload(let bytes, let badgeCounter):
            return .push(APNsRequest(body: .bytes(bytes), targets: .devices(receiver.devices), badgeCounter: badgeCounter))
        }
    }

    public var request: APNsRequest? {
        if case .push(let r) = self { return r }
        return nil
    }

    public var reason: SuppressionReason? {
        if case .suppressed(let r) = self { return r }
        return nil
    }

    /// The decision as one compact JSON object:
    /// `{"push":true,"payload":{…},"deliveries":[{"device":{"token":…,"environment":…},"headers":{…}},…]}`
    /// or `{"push":false,"reason":"…"}`.
    public var json: [UInt8] {
        var w = JSONWriter(capacity: 512)
        write(to: &w)
        return w.bytes
    }

    public var jsonText: String { String(decoding: json, as: UTF8.self) }

    /// Writes the decision JSON.
    public func write(to w: inout JSONWriter) {
        switch self {
        case .suppressed(let reason):
            w.raw("{\"push\":false,\"reason\":")
            w.string(reason.rawValue)
            w.raw("}")
        case .push(let request):
            w.raw("{\"push\":true,\"payload\":")
            request.writePayload(into: &w)
            w.raw(",\"deliveries\":[")
            for (i, delivery) in request.deliveries.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"device\":{\"token\":")
                w.string(delivery.device.token)
                w.raw(",\"environment\":")
                w.string(delivery.device.certificate.environment.rawValue)
                w.raw("},\"headers\":{")
                for (j, header) in delivery.headers.enumerated() {
                    if j > 0 { w.raw(",") }
                    w.string(header.name)
                    w.raw(":")
                    w.string(header.value)
                }
                w.raw("}}")
            }
            w.raw("]}")
        }
    }
}
