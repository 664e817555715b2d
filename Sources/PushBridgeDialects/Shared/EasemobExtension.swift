import PushBridgeCore
import PushBridgeJSON

/// The push-related keys of an Easemob/Agora message `ext` (Specification §3.1), shared by both Easemob dialects.
///
/// Keys that start with `em_` are reserved for the vendor: an unknown one is rejected (it is
/// almost always a typo). Other keys are the app's own message attributes and are not pushed.
public struct EasemobExtension: Sendable {
    /// The keys of `em_apns_ext`.
    public static let apnsKeys = [
        "extern", "em_push_content", "em_push_title", "em_push_category", "em_push_sound", "em_push_mutable_content",
        "em_push_badge", "em_push_title_loc_key", "em_push_title_loc_args", "em_push_body_loc_key", "em_push_body_loc_args",
        "em_alert_title", "em_alert_subTitle", "em_alert_body",
    ]

    /// The reserved top-level keys this dialect understands.
    public let topLevelKeys: [String]

    /// - Parameter allowsTemplate: whether `em_push_template` is part of the dialect (agora-silent).
    public init(allowsTemplate: Bool) {
        var keys = ["em_apns_ext", "em_ignore_notification", "em_force_notification", "em_at_list"]
        if allowsTemplate { keys.append("em_push_template") }
        topLevelKeys = keys
    }

    /// Every accepted field as a path under `ext`.
    public var fieldPaths: [String] {
        topLevelKeys.filter { $0 != "em_apns_ext" }.map { "ext.\($0)" } + EasemobExtension.apnsKeys.map { "ext.em_apns_ext.\($0)" }
    }

    /// Applies the `ext` object at `pointer` to a canonical message.
    public func apply(_ ext: JSONValue, at pointer: JSONPointer, to message: inout PushMessage) throws {
        let reader = try FieldReader(ext, at: pointer, what: "the message ext object")
        for key in reader.object.keys where key.hasPrefix("em_") && !topLevelKeys.contains(key) {
            throw InputError(.unknownKey, at: pointer / key,
                expected: "one of the push keys " + topLevelKeys.joined(separator: ", ") + " (other em_ keys are not supported)",
                found: "unknown key \"\(key)\"")
        }
        message.ignore = try reader.optionalBool("em_ignore_notification") ?? false
        message.force = try reader.optionalBool("em_force_notification") ?? false
        if let mentions = reader.value("em_at_list") {
            switch mentions {
            case .string("all"): message.mentions = .everyone
            case .array:
                message.mentions = .users(try reader.stringArray("em_at_list", expected: "an array of user ids or the string \"all\""))
            default:
                throw InputError(.wrongType, at: pointer / "em_at_list", expected: "an array of user ids or the string \"all\"",
                    found: mentions.briefDescription)
            }
        }
        if let template = try reader.optionalObject("em_push_template", expected: "a template reference {\"name\", \"title_args\", \"content_args\"}") {
            try template.allowOnly(["name", "title_args", "content_args"], context: "em_push_template")
            message.template = TemplateReference(
                name: try template.string("name", expected: "the template name", allowEmpty: false),
                titleArgs: try template.optionalStringArray("title_args") ?? [],
                contentArgs: try template.optionalStringArray("content_args") ?? [])
        }
        guard let apns = try reader.optionalObject("em_apns_ext", expected: "the em_apns_ext object") else { return }
        try apns.allowOnly(EasemobExtension.apnsKeys, context: "em_apns_ext")
        // An empty extension string is no extension in every profile (Specification §10).
        message.extensionValue = apns.value("extern") == .string("") ? nil : apns.value("extern")
        message.pushContent = try apns.optionalString("em_push_content")
        message.pushTitle = try apns.optionalString("em_push_title")
        message.category = try apns.optionalString("em_push_category")
        // `em_push_sound: null` is silent, like "" (seed 000: no sound when it is empty).
        if apns.value("em_push_sound") == .null {
            message.sound = .silent
        } else if let sound = try apns.optionalString("em_push_sound") {
            message.sound = sound.isEmpty ? .silent : SoundChoice(sound)
        }
        message.mutableContent = try apns.optionalBool("em_push_mutable_content") ?? false
        message.badgeOverride = try apns.optionalInt("em_push_badge", in: 0...99_999, expected: "a badge number 0–99999")
        message.localization = LocalizationKeys(
            titleKey: try apns.optionalString("em_push_title_loc_key"),
            titleArgs: try apns.optionalStringArray("em_push_title_loc_args"),
            bodyKey: try apns.optionalString("em_push_body_loc_key"),
            bodyArgs: try apns.optionalStringArray("em_push_body_loc_args"))
        message.alertTitle = try apns.optionalString("em_alert_title")
        message.alertSubtitle = try apns.optionalString("em_alert_subTitle")
        message.alertBody = try apns.optionalString("em_alert_body")
    }
}
