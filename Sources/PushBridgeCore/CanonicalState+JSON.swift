import Foundation
import PushBridgeJSON

extension UserState {
    /// The canonical state as JSON, for a server's user read (Specification §11): devices newest first,
    /// settings only where set, conversations sorted by kind and id.
    public var jsonValue: JSONValue {
        var o: [(key: String, value: JSONValue)] = [("user", .string(user))]
        o.append(("devices", .array(devices.map(\.jsonValue))))
        if let boundCertificate { o.append(("boundCertificate", boundCertificate.jsonValue)) }
        switch presence {
        case .online: o.append(("presence", .string("online")))
        case .offline: o.append(("presence", .string("offline")))
        case .background(let since):
            o.append(("presence", .string("background")))
            o.append(("backgroundSince", .string(since.description)))
        }
        o.append(("backgroundGraceSeconds", .int(backgroundGraceSeconds)))
        o.append(("badge", .int(Int64(badge))))
        o.append(("timezone", .string(timeZone.identifier)))
        o.append(("displayStyle", .string(displayStyle.rawValue)))
        if let displayName { o.append(("displayName", .string(displayName))) }
        if let language { o.append(("language", .string(language))) }
        if let oneToOneSound { o.append(("oneToOneSound", .string(oneToOneSound))) }
        if let groupSound { o.append(("groupSound", .string(groupSound))) }
        var appSettings: [(key: String, value: JSONValue)] = []
        if let remind = app.remindType { appSettings.append(("remindType", .string(remind.rawValue))) }
        if let window = app.window {
            appSettings.append(("doNotDisturb", .object(JSONObject([
                ("start", .string(DoNotDisturbWindow.clockText(window.startMinute))),
                ("end", .string(DoNotDisturbWindow.clockText(window.endMinute))),
            ]))))
        }
        if let silent = app.silentPeriod { appSettings.append(("silentPeriod", silent.jsonValue)) }
        o.append(("app", .object(JSONObject(appSettings))))
        let sorted = conversations.sorted { ($0.key.kind.rawValue, $0.key.id) < ($1.key.kind.rawValue, $1.key.id) }
        o.append(("conversations", .array(sorted.map { key, settings in
            var c: [(key: String, value: JSONValue)] = [("type", .string(key.kind.rawValue)), ("id", .string(key.id))]
            if let remind = settings.remindType { c.append(("remindType", .string(remind.rawValue))) }
            if let silent = settings.silentPeriod { c.append(("silentPeriod", silent.jsonValue)) }
            return .object(JSONObject(c))
        })))
        if !nameCards.isEmpty {
            o.append(("nameCards", .object(JSONObject(nameCards.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))))
        }
        return .object(JSONObject(o))
    }
}

extension Device {
    /// `{"token", "certificate": {…}, "boundAt"}`.
    public var jsonValue: JSONValue {
        .object(JSONObject([
            ("token", .string(token)), ("certificate", certificate.jsonValue), ("boundAt", .string(boundAt.description)),
        ]))
    }
}

extension Certificate {
    /// The scenario's certificate object: `{"name" or "busiId", "bundleId", "environment"}`.
    public var jsonValue: JSONValue {
        var o: [(key: String, value: JSONValue)] = []
        if let name { o.append(("name", .string(name))) }
        if let busiId { o.append(("busiId", .string(busiId))) }
        o.append(("bundleId", .string(bundleId)))
        o.append(("environment", .string(environment.rawValue)))
        return .object(JSONObject(o))
    }
}

extension SilentPeriod {
    /// `{"start", "until"}` as ISO 8601 instants.
    public var jsonValue: JSONValue {
        .object(JSONObject([("start", .string(start.description)), ("until", .string(until.description))]))
    }
}

extension AppConfiguration {
    /// The scenario's `app` object: what reading it back gives the same configuration.
    public var jsonValue: JSONValue {
        .object(JSONObject([
            ("certificates", .array(certificates.map(\.jsonValue))),
            ("templates", .array(templates.map { template in
                var t: [(key: String, value: JSONValue)] = [("name", .string(template.name))]
                if let title = template.titlePattern { t.append(("title_pattern", .string(title))) }
                if let content = template.contentPattern { t.append(("content_pattern", .string(content))) }
                return .object(JSONObject(t))
            })),
        ]))
    }
}
