import PushBridgeCore
import PushBridgeJSON

extension EasemobExtension {
    /// Writes a canonical message's push options as an `ext` object (`nil` when there are none),
    /// recording what the Easemob dialects cannot carry.
    /// - Parameters:
    ///   - message: the canonical message.
    ///   - dialect: the target dialect id, for loss reasons.
    ///   - output: where losses go.
    func write(_ message: PushMessage, dialect: String, into output: inout TranslationOutput) -> JSONObject? {
        var apns = JSONObject()
        if let v = message.extensionValue { apns["extern"] = v }
        if let v = message.pushContent { apns["em_push_content"] = .string(v) }
        if let v = message.pushTitle { apns["em_push_title"] = .string(v) }
        if let v = message.category { apns["em_push_category"] = .string(v) }
        switch message.sound {
        case .named(let name)?: apns["em_push_sound"] = .string(name)
        case .silent?: apns["em_push_sound"] = .string("")
        case nil: break
        }
        if message.mutableContent { apns["em_push_mutable_content"] = .bool(true) }
        if let v = message.badgeOverride { apns["em_push_badge"] = .int(Int64(v)) }
        let loc = message.localization
        if let v = loc.titleKey { apns["em_push_title_loc_key"] = .string(v) }
        if let v = loc.titleArgs { apns["em_push_title_loc_args"] = .array(v.map(JSONValue.string)) }
        if let v = loc.bodyKey { apns["em_push_body_loc_key"] = .string(v) }
        if let v = loc.bodyArgs { apns["em_push_body_loc_args"] = .array(v.map(JSONValue.string)) }
        if let v = message.alertTitle { apns["em_alert_title"] = .string(v) }
        if let v = message.alertSubtitle { apns["em_alert_subTitle"] = .string(v) }
        if let v = message.alertBody { apns["em_alert_body"] = .string(v) }

        var ext = JSONObject()
        if !apns.isEmpty { ext["em_apns_ext"] = .object(apns) }
        if message.ignore { ext["em_ignore_notification"] = .bool(true) }
        if message.force { ext["em_force_notification"] = .bool(true) }
        switch message.mentions {
        case .nobody: break
        case .everyone: ext["em_at_list"] = .string("all")
        case .users(let ids): ext["em_at_list"] = .array(ids.map(JSONValue.string))
        }
        if let template = message.template {
            if topLevelKeys.contains("em_push_template") {
                ext["em_push_template"] = .object(
                    JSONObject([
                        ("name", .string(template.name)), ("title_args", .array(template.titleArgs.map(JSONValue.string))),
                        ("content_args", .array(template.contentArgs.map(JSONValue.string))),
                    ]))
            } else {
                output.lose(.messageTemplate, "\(dialect) has no push templates (em_push_template is agora-silent only)")
            }
        }
        if message.ignoreBadge {
            output.lose(.messageIgnoreBadge, "\(dialect) cannot leave a push out of the badge; em_push_badge only sets the value shown")
        }
        if message.androidOptions != nil {
            output.lose(.messageAndroidOptions, "\(dialect) messages carry no Android push options (they have no effect on APNs)")
        }
        if message.groupName != nil {
            output.lose(.messageGroupName, "\(dialect) messages carry no group name (only the Tencent profile shows one)")
        }
        return ext.isEmpty ? nil : ext
    }

    /// The one content part an Easemob message body holds: the content override, several
    /// elements or an element type the dialect lacks become text, and that is recorded as a loss.
    /// - Parameters:
    ///   - message: the canonical message.
    ///   - dialect: the target dialect id.
    ///   - output: where losses go.
    ///   - representable: whether the dialect has a body type for a part.
    static func singlePart(of message: PushMessage, dialect: String, into output: inout TranslationOutput, representable: (ContentPart) -> Bool)
        -> ContentPart
    {
        if let override = message.contentOverride {
            output.lose(.messageContentOverride,
                "\(dialect) has no content override that keeps the name prefix: written as the message text",
                alsoChanges: [.messageContent])
            return .text(override)
        }
        if message.content.count == 1, representable(message.content[0]) { return message.content[0] }
        let text = message.derivedContent
        output.lose(.messageContent,
            message.content.count == 1
                ? "\(dialect) has no body for this element: written as its push text \"\(text)\""
                : "\(dialect) messages have one body: \(message.content.count) elements joined into the text \"\(text)\"")
        return .text(text)
    }
}
