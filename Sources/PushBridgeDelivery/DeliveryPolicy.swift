import PushBridgeCore
import PushBridgeFacade
import PushBridgeStore

/// What one attempt to send a delivery came to.
public enum DeliveryAttempt: Sendable, Hashable {
    /// APNs answered.
    case answered(APNsAnswer)
    /// No answer: a timeout, a reset connection, a refused connection (named for the record).
    case transportFailure(String)
    /// No credential serves the delivery's topic.
    case noCredential(topic: String)
}

/// An answer of APNs: the status, and what its body and headers said.
public struct APNsAnswer: Sendable, Hashable {
    public var status: Int
    /// The body's `reason` (none for 200).
    public var reason: String?
    /// The 410 body's `timestamp`: when APNs learnt the token was no longer valid (epoch milliseconds).
    public var timestampMilliseconds: Int64?
    /// The `retry-after` header, in seconds.
    public var retryAfterSeconds: Int?
    /// The `apns-id` header.
    public var apnsID: String?
    /// The `iat` of the provider token the request carried (token auth).
    public var providerTokenIssuedAt: Int64?

    public init(
        status: Int, reason: String? = nil, timestampMilliseconds: Int64? = nil, retryAfterSeconds: Int? = nil, apnsID: String? = nil,
        providerTokenIssuedAt: Int64? = nil
    ) {
        self.providerTokenIssuedAt = providerTokenIssuedAt
        self.status = status
        self.reason = reason
        self.timestampMilliseconds = timestampMilliseconds
        self.retryAfterSeconds = retryAfterSeconds
        self.apnsID = apnsID
    }
}

/// What Specification §13 makes of each answer, as a pure function: deliver, remove the device, retry with
/// backoff, refresh the provider token, or fail.
public struct DeliveryPolicy: Sendable, Hashable {
    /// Retries stop (the delivery fails) once it has waited this long since it was queued.
    public var maximumAgeSeconds: Int64
    /// The first retry's delay, doubled for each further attempt.
    public var retryBaseMilliseconds: Int64
    /// The longest delay between two attempts.
    public var retryCapMilliseconds: Int64

    /// - Parameters: the fields above.
    public init(maximumAgeSeconds: Int64 = 86_400, retryBaseMilliseconds: Int64 = 1_000, retryCapMilliseconds: Int64 = 300_000) {
        self.maximumAgeSeconds = maximumAgeSeconds
        self.retryBaseMilliseconds = retryBaseMilliseconds
        self.retryCapMilliseconds = retryCapMilliseconds
    }

    /// The reasons that mean the device token is dead (the device is removed, unless bound again).
    public static let deadTokenReasons: Set<String> = ["Unregistered", "ExpiredToken", "BadDeviceToken", "DeviceTokenNotForTopic"]

    /// What to record for an attempt.
    public struct Verdict: Sendable, Hashable {
        public var settlement: DeliverySettlement
        /// The device to remove, when the answer declared it dead.
        public var dead: PushFacade.DeadDevice?
        /// The provider token was refused as expired: make a new one before the retry.
        public var refreshProviderToken: Bool
    }

    /// Judges one attempt.
    /// - Parameters:
    ///   - attempt: what happened.
    ///   - delivery: the delivery (its attempts so far and when it was queued).
    ///   - sentAt: when the request was sent.
    ///   - now: now.
    ///   - jitter: a number in 0..<1 that spreads the retries (random in service; fixed in tests).
    public func judge(_ attempt: DeliveryAttempt, delivery: OutboxDelivery, sentAt: Instant, now: Instant, jitter: Double) -> Verdict {
        func final(_ state: DeliveryState, _ status: Int?, _ reason: String?) -> Verdict {
            Verdict(settlement: DeliverySettlement(id: delivery.id, state: state, status: status, reason: reason), dead: nil, refreshProviderToken: false)
        }
        func retry(_ status: Int?, _ reason: String, after minimum: Int64 = 0, immediately: Bool = false, refresh: Bool = false) -> Verdict {
            let exponent = min(delivery.attempts, 30)
            let full = min(retryCapMilliseconds, retryBaseMilliseconds << Int64(exponent))
            // "Equal jitter": half the delay fixed, half random, so retries of one burst spread out.
            var delay = immediately ? 0 : full / 2 + Int64(Double(full / 2) * jitter)
            delay = max(delay, minimum)
            let at = Instant(milliseconds: now.milliseconds + delay)
            if at > delivery.queuedAt.adding(seconds: maximumAgeSeconds) {
                return final(.failed, status, reason + " (gave up: older than \(maximumAgeSeconds) s)")
            }
            return Verdict(
                settlement: DeliverySettlement(id: delivery.id, state: .queued, status: status, reason: reason, retryAt: at), dead: nil,
                refreshProviderToken: refresh)
        }
        switch attempt {
        case .noCredential(let topic):
            return final(.failed, nil, "no credential for topic \(topic)")
        case .transportFailure(let what):
            return retry(nil, what)
        case .answered(let answer):
            let reason = answer.reason ?? ""
            switch answer.status {
            case 200:
                return final(.delivered, 200, nil)
            case 410 where Self.deadTokenReasons.contains(reason), 400 where Self.deadTokenReasons.contains(reason):
                var verdict = final(.failed, answer.status, reason)
                let cutoff = answer.status == 410 ? answer.timestampMilliseconds.map(Instant.init(milliseconds:)) ?? sentAt : sentAt
                verdict.dead = PushFacade.DeadDevice(deliveryID: delivery.id, token: delivery.token, notBoundAfter: cutoff)
                return verdict
            case 403 where reason == "ExpiredProviderToken":
                // A new token and at once, the first time; a token refused again backs off like any
                // retry (a clock far off would otherwise spin).
                return retry(403, reason, immediately: delivery.attempts == 0, refresh: true)
            case 429, 500...599:
                return retry(answer.status, reason.isEmpty ? "status \(answer.status)" : reason, after: Int64(answer.retryAfterSeconds ?? 0) * 1_000)
            default:
                return final(.failed, answer.status, reason.isEmpty ? "status \(answer.status)" : reason)
            }
        }
    }
}
