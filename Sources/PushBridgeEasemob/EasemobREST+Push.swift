import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeVendorREST

// Easemob / Agora Chat device binding and push without a message (Specification §14; vendor REST facts §2,
// §3): bodies read into a binding, or into `agora-silent` messages the facade decides as any other.
extension EasemobREST {
    /// A `PUT …/users/{u}/push/binding` body.
    public struct PushBindingRequest: Sendable {
        /// `device_id`: the app install (non-empty).
        public var deviceID: String
        /// `device_token`: hex, or empty (unbind the device for the certificate).
        public var token: String
        /// `notifier_name`: the certificate name, or empty (unbind every binding of the device).
        public var notifier: String
    }

    /// `{"device_id", "device_token", "notifier_name"}`.
    public static func pushBinding(_ body: JSONValue) throws -> PushBindingRequest {
        let r = try FieldReader(body, at: .root, what: "{\"device_id\", \"device_token\", \"notifier_name\"}")
        try r.allowOnly(["device_id", "device_token", "notifier_name"], context: "a push binding")
        let deviceID = try r.string("device_id", expected: "the device id, a non-empty string", allowEmpty: false)
        try IdentifierRule.check(deviceID, at: .root / "device_id", what: "a device id")
        var token = try r.optionalString("device_token", expected: "the device token (hex), or \"\" to unbind") ?? ""
        if !token.isEmpty { token = try r.hexToken("device_token") }
        let notifier = try r.optionalString("notifier_name", expected: "the certificate name, or \"\" to unbind every binding of the device") ?? ""
        if !notifier.isEmpty { try IdentifierRule.check(notifier, at: .root / "notifier_name", what: "a certificate name") }
        return PushBindingRequest(deviceID: deviceID, token: token, notifier: notifier)
    }

    /// The most targets `/push/single` takes.
    public static let maximumPushTargets = 100

    /// A push without a message: `pushMessage` {`title` ≤ 32, `subTitle` ≤ 10, `content` ≤ 100, `ext`
    /// (≤ 10 keys), `config` {`badge`, `clickAction`}, `apns` {`mutableContent`, `contentAvailable`}}
    /// and `strategy` (0, 2 or 3: through APNs; 1 and 4 are Easemob's own channel and online only,
    /// which PushBridge has not) → one `agora-silent` message per target from the administrator,
    /// forced through do-not-disturb and remind types (a notification, not a chat message).
    /// - Parameters:
    ///   - body: the request body.
    ///   - target: the target of `/push/sync/{target}`; `nil` for `/push/single` (`targets` in the body).
    ///   - newID: makes a message id.
    public static func pushMessages(_ body: JSONValue, target: String?, newID: () -> String) throws -> [VendorMessage] {
        let r = try FieldReader(body, at: .root, what: "a push {\"targets\", \"pushMessage\", \"strategy\"}")
        try r.allowOnly(target == nil ? ["targets", "pushMessage", "strategy"] : ["pushMessage", "strategy"], context: "a push")
        let targets: [String]
        if let target {
            try IdentifierRule.check(target, at: .root, what: "the {target} user")
            targets = [target]
        } else {
            targets = try usernames(r, "targets", maximum: maximumPushTargets)
        }
        if let strategy = try r.optionalInt("strategy", in: 0...4, expected: "a strategy 0–4"), strategy == 1 || strategy == 4 {
            throw InputError(.invalidValue, at: .root / "strategy", expected: "0, 2 or 3 (PushBridge pushes through APNs; 1 and 4 use Easemob's own channel)", found: String(strategy))
        }
        let m = try r.object("pushMessage", expected: "the notification {\"title\", \"subTitle\", \"content\", \"ext\", \"config\", \"apns\"}")
        try m.allowOnly(["title", "subTitle", "content", "ext", "config", "apns"], context: "a pushMessage")
        let title = try m.optionalString("title", expected: "the title, at most 32 characters")
        try limit(title ?? "", 32, at: m.pointer / "title")
        let subtitle = try m.optionalString("subTitle", expected: "the subtitle, at most 10 characters")
        try limit(subtitle ?? "", 10, at: m.pointer / "subTitle")
        let content = try m.string("content", expected: "the content shown, 1–100 characters", allowEmpty: false)
        try limit(content, 100, at: m.pointer / "content")
        var apns: [(key: String, value: JSONValue)] = []
        if let title, !title.isEmpty { apns.append(("em_push_title", .string(title))) }
        if let subtitle, !subtitle.isEmpty { apns.append(("em_alert_subTitle", .string(subtitle))) }
        apns.append(("em_push_content", .string(content)))
        if let ext = try m.optionalObject("ext", expected: "custom fields, an object of at most 10 keys") {
            guard ext.object.count <= 10 else { throw InputError(.outOfRange, at: ext.pointer, expected: "at most 10 keys", found: "\(ext.object.count) keys") }
            guard JSONValue.object(ext.object).compactText.utf8.count <= 1024 else {
                throw InputError(.outOfRange, at: ext.pointer, expected: "at most 1024 characters of JSON", found: "\(JSONValue.object(ext.object).compactText.utf8.count)")
            }
            apns.append(("extern", .object(ext.object)))
        }
        if let config = try m.optionalObject("config", expected: "{\"badge\", \"clickAction\"}") {
            try config.allowOnly(["badge", "clickAction"], context: "a pushMessage config")
            if let badge = try config.optionalObject("badge", expected: "{\"addNum\"} or {\"setNum\"}") {
                try badge.allowOnly(["addNum", "setNum", "activity"], context: "a badge")
                if badge.has("addNum") { throw InputError(.unknownKey, at: badge.pointer / "addNum", expected: "setNum (APNs shows a number; PushBridge counts one per push itself)") }
                if let number = try badge.optionalInt("setNum", in: 0...99_999, expected: "the badge number 0–99999") { apns.append(("em_push_badge", .int(Int64(number)))) }
                _ = try badge.optionalString("activity")
            }
            if config.has("clickAction") { _ = try config.object("clickAction", expected: "{\"url\", \"action\", \"activity\"} (Android only)") }
        }
        if let a = try m.optionalObject("apns", expected: "{\"mutableContent\", \"contentAvailable\"}") {
            try a.allowOnly(["mutableContent", "contentAvailable"], context: "apns")
            if try a.optionalBool("mutableContent") == true { apns.append(("em_push_mutable_content", true)) }
            if try a.optionalBool("contentAvailable") == true {
                throw InputError(.invalidValue, at: a.pointer / "contentAvailable", expected: "false: background pushes are not made by PushBridge")
            }
        }
        let ext: JSONValue = ["em_force_notification": true, "em_apns_ext": .object(JSONObject(apns))]
        return targets.map { target in
            let o: [(key: String, value: JSONValue)] = [
                ("id", .string(newID())), ("conversationId", .string(target)), ("from", .string(defaultSender)), ("to", .string(target)),
                ("chatType", "Chat"), ("body", ["type": "text", "text": .string(content)]), ("ext", ext),
            ]
            return VendorMessage(dialect: "agora-silent", message: .object(JSONObject(o)), sender: defaultSender, targets: [target], isGroup: false)
        }
    }
}
