import PushBridgeCore

/// One APNs request in the outbox (Specification §13): queued in the transaction that decided it, claimed
/// by a delivery worker, and settled with its outcome.
public struct OutboxDelivery: Hashable, Sendable {
    /// The store's id for it (0 until it is queued).
    public var id: Int64
    /// The message it belongs to.
    public var messageID: String
    /// The receiver whose device it goes to.
    public var receiver: UserID
    /// The device token (hex, lower case).
    public var token: String
    /// The APNs environment of the certificate the device was bound with.
    public var environment: APNsEnvironment
    /// When the device was bound, as the decision saw it.
    public var boundAt: Instant
    /// The request headers of the decision, in order (`apns-topic` among them).
    public var headers: [HeaderField]
    /// The payload bytes.
    public var payload: [UInt8]
    /// When it was queued: retries stop after the configured age counted from here.
    public var queuedAt: Instant
    /// How many times it was sent before this claim.
    public var attempts: Int
    /// The render class's template `payload` was written from, with this receiver's badge (the
    /// receiver is ``receiver``), when the decision had one: a store may keep the template once for
    /// the deliveries that share it. Not part of the delivery's value (`==` and `hash` leave it out).
    package var template: (payload: PayloadTemplate, badge: Int)?

    /// - Parameters: the fields above; `id` and `attempts` start at 0.
    public init(
        id: Int64 = 0, messageID: String, receiver: UserID, token: String, environment: APNsEnvironment, boundAt: Instant,
        headers: [HeaderField], payload: [UInt8], queuedAt: Instant, attempts: Int = 0
    ) {
        self.id = id
        self.messageID = messageID
        self.receiver = receiver
        self.token = token
        self.environment = environment
        self.boundAt = boundAt
        self.headers = headers
        self.payload = payload
        self.queuedAt = queuedAt
        self.attempts = attempts
    }

    public static func == (lhs: OutboxDelivery, rhs: OutboxDelivery) -> Bool {
        lhs.id == rhs.id && lhs.messageID == rhs.messageID && lhs.receiver == rhs.receiver && lhs.token == rhs.token
            && lhs.environment == rhs.environment && lhs.boundAt == rhs.boundAt && lhs.headers == rhs.headers && lhs.payload == rhs.payload
            && lhs.queuedAt == rhs.queuedAt && lhs.attempts == rhs.attempts
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(messageID)
        hasher.combine(receiver)
        hasher.combine(token)
        hasher.combine(payload)
    }

    /// Its lane: 1 for a push task's delivery (its message id has the tasks' prefix), else 0. A worker
    /// claims lane 0 first, so chat pushes never wait behind a campaign's.
    public var lane: Int { messageID.utf8.starts(with: PushTask.messageIDPrefix.utf8) ? 1 : 0 }

    /// The value of a header, by (lower-case) name.
    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// A request the outbox stores once for a run of deliveries: the headers, and the payload as a
/// template (with no marks when every delivery of the run sends the same bytes).
package struct DeliveryContent: Sendable {
    package var headers: [HeaderField]
    package var template: PayloadTemplate

    /// One delivery's payload: the template with its badge (`nil`: none stored) and receiver.
    /// - Throws: ``StoreError`` `unexpected-value` when the template marks a badge and none is stored.
    package func payload(badge: Int?, receiver: UserID) throws -> [UInt8] {
        if template.isFixed { return template.bytes }
        guard let badge = badge ?? (template.badge == nil ? 0 : nil) else {
            throw StoreError(.unexpectedValue, "a delivery of a payload template without its badge", context: "deliveries.badge")
        }
        return template.payload(badge: badge, receiver: receiver)
    }
}

extension OutboxDelivery {
    /// Whether `other` sends the same request to its device by the same means: the same headers, and
    /// the same template (each with its own badge and receiver) or, without one, the same bytes.
    /// - Parameter other: another delivery.
    package func sharesContent(with other: OutboxDelivery) -> Bool {
        guard headers == other.headers else { return false }
        switch (template, other.template) {
        case (let mine?, let theirs?): return mine.payload === theirs.payload
        case (nil, nil): return payload == other.payload
        default: return false
        }
    }
}

/// One HTTP header: a name (lower case) and its value.
public struct HeaderField: Hashable, Sendable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Where a delivery stands.
public enum DeliveryState: String, Hashable, Sendable, CaseIterable {
    /// Waiting to be sent, or to be sent again.
    case queued
    /// APNs answered 200.
    case delivered
    /// Given up: a final APNs answer, or retries past the configured age.
    case failed
}

/// What a delivery attempt came to, as the worker records it.
public struct DeliverySettlement: Hashable, Sendable {
    /// The delivery's id.
    public var id: Int64
    /// The state after this attempt (`queued` = to be retried at ``retryAt``).
    public var state: DeliveryState
    /// The HTTP status APNs answered, when it answered.
    public var status: Int?
    /// APNs's `reason`, or what went wrong on the way (`timeout`, `connection-reset`, …).
    public var reason: String?
    /// When to try again (only for `queued`).
    public var retryAt: Instant?
    /// Whether the device was removed because of this answer.
    public var deviceRemoved: Bool

    /// - Parameters: the fields above.
    public init(id: Int64, state: DeliveryState, status: Int? = nil, reason: String? = nil, retryAt: Instant? = nil, deviceRemoved: Bool = false) {
        self.id = id
        self.state = state
        self.status = status
        self.reason = reason
        self.retryAt = retryAt
        self.deviceRemoved = deviceRemoved
    }
}

/// A delivery as a message read shows it.
public struct DeliveryRecord: Hashable, Sendable {
    public var id: Int64
    public var receiver: UserID
    public var token: String
    public var state: DeliveryState
    /// Attempts made so far.
    public var attempts: Int
    /// The last HTTP status, when APNs answered.
    public var status: Int?
    /// The last reason (APNs's, or the transport's).
    public var reason: String?
    /// When the state last changed (queued: when it was queued or last tried).
    public var updatedAt: Instant
    /// Whether the device was removed because of the answer.
    public var deviceRemoved: Bool

    public init(
        id: Int64, receiver: UserID, token: String, state: DeliveryState, attempts: Int, status: Int?, reason: String?, updatedAt: Instant,
        deviceRemoved: Bool
    ) {
        self.id = id
        self.receiver = receiver
        self.token = token
        self.state = state
        self.attempts = attempts
        self.status = status
        self.reason = reason
        self.updatedAt = updatedAt
        self.deviceRemoved = deviceRemoved
    }
}

/// What the outbox of one store holds, by state.
public struct OutboxCounts: Hashable, Sendable {
    public var queued: Int
    public var delivered: Int
    public var failed: Int
    public init(queued: Int, delivered: Int, failed: Int) {
        self.queued = queued
        self.delivered = delivered
        self.failed = failed
    }
}

extension OutboxDelivery {
    /// Headers as stored: `name` NUL `value` NUL, repeated (header names and values hold no NUL).
    public static func encode(_ headers: [HeaderField]) -> [UInt8] {
        var out: [UInt8] = []
        for header in headers {
            out += header.name.utf8
            out.append(0)
            out += header.value.utf8
            out.append(0)
        }
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws -> [HeaderField] {
        let parts = bytes.split(separator: 0, omittingEmptySubsequences: false)
        guard bytes.isEmpty || (bytes.last == 0 && parts.count % 2 == 1) else {
            throw StoreError(.unexpectedValue, "damaged outbox headers", context: "deliveries.headers")
        }
        var out: [HeaderField] = []
        var i = 0
        while i + 1 < parts.count {
            out.append(HeaderField(String(decoding: parts[i], as: UTF8.self), String(decoding: parts[i + 1], as: UTF8.self)))
            i += 2
        }
        return out
    }
}
