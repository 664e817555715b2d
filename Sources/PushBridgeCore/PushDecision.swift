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
    /// The message is a command (`cmd`): signalling for the app, never an offline push (Specification §14).
    case command
    /// The group's offline push is off (an Easemob / Agora Chat group created with `maxusers`
    /// above 3,000, Specification §14): decided after every other rule, for a receiver that would be pushed.
    case largeGroup = "large-group"
}

/// What one push sends: one payload for the receiver, delivered to each of the receiver's devices.
///
/// A plain value. A fan-out makes its requests in a form of its own (a payload shared by a render
/// class with each receiver's values patched in, devices referred to where a store keeps them:
/// `FanOutRequest`), and writes them out as these when asked.
public struct APNsRequest: Hashable, Sendable {
    /// The exact payload, compact UTF-8 JSON of at most ``PayloadRenderer/maximumPayloadBytes``; the
    /// same bytes go to every device (one badge counter per user).
    public var payload: [UInt8]
    /// One APNs request per device, newest binding first.
    public var deliveries: [APNsDelivery]
    /// The receiver's badge counter after this push.
    public var badgeCounter: Int

    /// - Parameters:
    ///   - payload: the payload bytes.
    ///   - deliveries: one per device, newest binding first (never empty).
    ///   - badgeCounter: the counter after this push.
    public init(payload: [UInt8], deliveries: [APNsDelivery], badgeCounter: Int) {
        self.payload = payload
        self.deliveries = deliveries
        self.badgeCounter = badgeCounter
    }

    /// The payload as text.
    public var payloadText: String { String(decoding: payload, as: UTF8.self) }
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
            return .push(APNsRequest(payload: bytes, deliveries: receiver.devices.map(APNsDelivery.init(device:)), badgeCounter: badgeCounter))
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
        w.raw("{")
        switch self {
        case .suppressed(let reason): Self.writeSuppressed(reason, to: &w)
        case .push(let request): Self.writePush(payload: { $0.raw(request.payload) }, deliveries: request.deliveries, to: &w)
        }
    }

    /// The fields of a suppressed decision after the object's opening brace: `"push":false,"reason":…}`
    /// (a caller may write its own fields first, as ``ReceiverDecision`` writes the receiver).
    package static func writeSuppressed(_ reason: SuppressionReason, to w: inout JSONWriter) {
        w.raw("\"push\":false,\"reason\":")
        w.string(reason.rawValue)
        w.raw("}")
    }

    /// The fields of a push after the object's opening brace: `"push":true,"payload":…,"deliveries":[…]}`,
    /// the payload written by `payload`.
    package static func writePush(payload: (inout JSONWriter) -> Void, deliveries: [APNsDelivery], to w: inout JSONWriter) {
        w.raw("\"push\":true,\"payload\":")
        payload(&w)
        w.raw(",\"deliveries\":[")
        for (i, delivery) in deliveries.enumerated() {
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
