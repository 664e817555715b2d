/// The reason of an attempt as a metric label: a bounded set, whatever APNs or the network said.
///
/// APNs's documented `reason` strings stand as they are; transport failures by kind (`timeout`,
/// `connection-refused`, `connection-reset`, `connection-failed`, `goaway`, `transport`); an
/// answer without a reason as `status-NNN`; a topic no credential serves as `no-credential`;
/// `none` for a delivered attempt; anything else as `other`. No token, topic or id ever appears.
public enum DeliveryReason {
    /// The `reason` strings of Apple's "Handling notification responses from APNs".
    public static let apnsReasons: Set<String> = [
        "BadCollapseId", "BadDeviceToken", "BadExpirationDate", "BadMessageId", "BadPriority", "BadTopic",
        "DeviceTokenNotForTopic", "DuplicateHeaders", "IdleTimeout", "InvalidPushType", "MissingDeviceToken",
        "MissingTopic", "PayloadEmpty", "TopicDisallowed", "BadCertificate", "BadCertificateEnvironment",
        "ExpiredProviderToken", "Forbidden", "InvalidProviderToken", "MissingProviderToken", "UnrelatedKeyIdInToken",
        "BadEnvironmentKeyIdInToken", "BadPath", "MethodNotAllowed", "ExpiredToken", "Unregistered", "PayloadTooLarge",
        "TooManyProviderTokenUpdates", "TooManyRequests", "InternalServerError", "ServiceUnavailable", "Shutdown",
    ]

    /// The reasons that say the credential itself is refused (a wrong key id, team, certificate or
    /// environment): every delivery with it fails until an operator changes it.
    public static let credentialReasons: Set<String> = [
        "InvalidProviderToken", "MissingProviderToken", "UnrelatedKeyIdInToken", "BadEnvironmentKeyIdInToken",
        "BadCertificate", "BadCertificateEnvironment", "Forbidden",
    ]

    static let transportKinds: Set<String> = ["timeout", "connection-refused", "connection-reset", "connection-failed", "goaway"]

    /// The label for a settlement's reason.
    /// - Parameter reason: `DeliverySettlement.reason` (`nil` when delivered).
    public static func label(_ reason: String?) -> String {
        guard var reason, !reason.isEmpty else { return "none" }
        // "Unregistered (gave up: older than 86400 s)": the reason it gave up on.
        if let cut = reason.range(of: " (gave up") { reason = String(reason[..<cut.lowerBound]) }
        if apnsReasons.contains(reason) || transportKinds.contains(reason) { return reason }
        if reason.hasPrefix("transport") { return "transport" }
        if reason.hasPrefix("no credential") { return "no-credential" }
        if reason.hasPrefix("status "), let code = Int(reason.dropFirst(7)), (100...599).contains(code) { return "status-\(code)" }
        return "other"
    }
}
