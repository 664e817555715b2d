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

/// One APNs request: payload bytes, headers and the device it goes to.
public struct APNsRequest: Hashable, Sendable {
    /// The exact payload, compact UTF-8 JSON of at most ``PayloadRenderer/maximumPayloadBytes``.
    public var payload: [UInt8]
    /// Header names and values, in a fixed order.
    public var headers: [(name: String, value: String)]
    public var device: Device
    /// The receiver's badge counter after this push.
    public var badgeCounter: Int

    public init(payload: [UInt8], headers: [(name: String, value: String)], device: Device, badgeCounter: Int) {
        self.payload = payload
        self.headers = headers
        self.device = device
        self.badgeCounter = badgeCounter
    }

    public static func == (lhs: APNsRequest, rhs: APNsRequest) -> Bool {
        lhs.payload == rhs.payload && lhs.device == rhs.device && lhs.badgeCounter == rhs.badgeCounter
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(payload)
        hasher.combine(device)
        hasher.combine(badgeCounter)
    }

    public var payloadText: String { String(decoding: payload, as: UTF8.self) }
}

/// Whether a message is pushed to one receiver, and what exactly is sent or why not.
public enum PushDecision: Hashable, Sendable {
    case push(APNsRequest)
    case suppressed(SuppressionReason)

    public var request: APNsRequest? {
        if case .push(let r) = self { return r }
        return nil
    }

    public var reason: SuppressionReason? {
        if case .suppressed(let r) = self { return r }
        return nil
    }

    /// The decision as one compact JSON object:
    /// `{"push":true,"payload":{…},"headers":{…},"device":{"token":…,"environment":…}}` or
    /// `{"push":false,"reason":"…"}`.
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
            for b in request.payload { w.byte(b) }
            w.raw(",\"headers\":{")
            for (i, header) in request.headers.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(header.name)
                w.raw(":")
                w.string(header.value)
            }
            w.raw("},\"device\":{\"token\":")
            w.string(request.device.token)
            w.raw(",\"environment\":")
            w.string(request.device.certificate.environment.rawValue)
            w.raw("}}")
        }
    }
}
