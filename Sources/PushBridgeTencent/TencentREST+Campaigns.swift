import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore
import PushBridgeVendorREST

// Tencent's pushes to many users (campaign research §2): tags (`all_member_push/im_*_tag*`), a push to
// every user or to tags (`all_member_push/im_push`, `timpush/push`: a push task) and a push to listed
// accounts (`timpush/batch`: sent at once). Each receiver's push is read as `openim/sendmsg` reads it.
extension TencentREST {
    /// The most tags `TagsAnd`, `TagsOr` or one account's `Tags` names (90032).
    public static let maximumRequestTags = 10
    /// The most bytes of a tag (90020).
    public static let maximumTagBytes = 50
    /// The most accounts a tag command names (90018).
    public static let maximumTagAccounts = 100
    /// The longest `MsgLifeTime`, in seconds (90026).
    public static let maximumLifeTime: Int64 = 604_800
    /// The most bytes of `timpush/batch`'s `DataId` (90057).
    public static let maximumDataIDBytes = 64

    /// A push task as requested: whom it goes to, and the body each receiver's push is made from.
    public struct CampaignRequest: Sendable {
        /// The tags a receiver has (`TagsAnd`: each, `TagsOr`: one at least); none: every user.
        public var audience: TaskAudience
        /// `MsgRandom`, Tencent's de-duplication key.
        public var random: Int64
        /// `{"From_Account", "MsgRandom", "MsgBody", "OfflinePushInfo"?, …}`: a `sendmsg` body without its receiver.
        public var stored: JSONValue
    }

    /// An `im_push` or `timpush/push` body: `Condition` (`TagsAnd` / `TagsOr`), `MsgRandom`,
    /// `MsgBody` (`timpush/push`: optional; without it the push is `OfflinePushInfo` alone),
    /// `MsgLifeTime`, `From_Account` (default: the administrator), `OfflinePushInfo`.
    /// - Parameters:
    ///   - body: the request body.
    ///   - command: `pushToAll` or `timPush`.
    ///   - administrator: the sender when `From_Account` is absent.
    /// - Throws: ``Failure`` with Tencent's code and the pointer.
    public static func campaign(_ body: JSONValue, command: Command, administrator: String) throws(Failure) -> CampaignRequest {
        return try reading(code: 90001) {
            let r = try FieldReader(body, at: .root, what: "the request body, a JSON object")
            let timPush = command == .timPush
            try r.allowOnly(
                ["Condition", "MsgRandom", "MsgBody", "MsgLifeTime", "From_Account", "OfflinePushInfo"] + (timPush ? ["OnlineOnlyFlag", "DataId"] : []),
                context: command.rawValue)
            let audience = try condition(r)
            let random = try msgRandom(r)
            let sender = try r.optionalString("From_Account", expected: "the sender's UserID", allowEmpty: false).map { try userID($0, at: .root / "From_Account") } ?? administrator
            if r.has("MsgLifeTime") {
                do { _ = try r.int("MsgLifeTime", in: 0...maximumLifeTime, expected: "seconds of offline storage, 0–\(maximumLifeTime)") } catch let error as InputError {
                    throw Failure(code: 90026, error)
                }
            }
            if timPush { try dataID(r) }
            var stored: [(key: String, value: JSONValue)] = [("From_Account", .string(sender)), ("MsgRandom", .int(random))]
            if r.has("MsgBody") || !timPush {
                stored.append(("MsgBody", r.value("MsgBody") ?? .null))
            } else {
                stored.append(("MsgBody", try pushOnlyBody(r)))
            }
            for key in ["MsgLifeTime", "OfflinePushInfo"] { if let value = r.value(key) { stored.append((key, value)) } }
            if timPush, try r.optionalInt("OnlineOnlyFlag", in: 0...1, expected: "0 or 1") == 1 { stored.append(("OnlineOnlyFlag", 1)) }
            let request = JSONValue.object(JSONObject(stored))
            _ = try taskMessages(request, to: ["receiver"], id: { $0 })  // read as each receiver's will be
            return CampaignRequest(audience: audience, random: random, stored: request)
        }
    }

    /// Each receiver's push of a task: the stored body with the receiver as `To_Account`, read as
    /// `openim/sendmsg` reads it (the sender stored with it).
    /// - Parameters:
    ///   - stored: ``CampaignRequest/stored``.
    ///   - users: the receivers.
    ///   - id: each receiver's message id.
    public static func taskMessages(_ stored: JSONValue, to users: [String], id: (String) -> String) throws -> [VendorMessage] {
        guard case .object(var body) = stored, case .string(let sender)? = body["From_Account"] else {
            throw InputError(.invalidValue, at: .root, expected: "a stored Tencent push task body", found: stored.briefDescription)
        }
        let onlineOnly = body["OnlineOnlyFlag"] != nil
        body["OnlineOnlyFlag"] = nil
        var made: [VendorMessage] = []
        made.reserveCapacity(users.count)
        for user in users {
            body["To_Account"] = .string(user)
            let messageID = id(user)
            var sent = try messages(.object(body), command: .sendMessage, administrator: sender, newID: { messageID })
            if onlineOnly { sent = sent.map(Self.onlineOnly) }
            made += sent
        }
        return made
    }

    /// A push to listed accounts (`timpush/batch`): the messages, one an account, and `DataId`.
    /// - Parameters:
    ///   - body: `From_Account`, `To_Account` (1–500), `MsgRandom`, `OfflinePushInfo`, `DataId`.
    ///   - newID: the message ids to use (by default each made as `batchsendmsg` makes it).
    /// - Throws: ``Failure`` with Tencent's code and the pointer.
    public static func batchPush(_ body: JSONValue, newID: (() -> String)? = nil) throws(Failure) -> (messages: [VendorMessage], random: Int64) {
        return try reading(code: 90001) {
            let r = try FieldReader(body, at: .root, what: "the request body, a JSON object")
            try r.allowOnly(["From_Account", "To_Account", "MsgRandom", "OfflinePushInfo", "DataId"], context: Command.timPushBatch.rawValue)
            let sender = try userID(try r.string("From_Account", expected: "the sender's UserID", allowEmpty: false), at: .root / "From_Account")
            let random = try msgRandom(r)
            try dataID(r)
            guard r.has("OfflinePushInfo") else { throw InputError(.missingKey, at: .root / "OfflinePushInfo", expected: "OfflinePushInfo {PushFlag, Title, Desc, Ext, ApnsInfo}") }
            var send: [(key: String, value: JSONValue)] = [
                ("From_Account", .string(sender)), ("To_Account", r.value("To_Account") ?? .null), ("MsgRandom", .int(random)), ("MsgBody", try pushOnlyBody(r)),
            ]
            send.append(("OfflinePushInfo", r.value("OfflinePushInfo")!))
            return (try messages(.object(JSONObject(send)), command: .batchSendMessage, administrator: sender, newID: newID), random)
        }
    }

    /// `UserTags: [{To_Account, Tags}]` of `im_add_tag` / `im_remove_tag`: 1–100 accounts, 1–10 tags each.
    /// - Parameters:
    ///   - body: the request body.
    ///   - command: the command (for the error text).
    /// - Throws: ``Failure`` with Tencent's code and the pointer.
    public static func userTags(_ body: JSONValue, command: Command) throws(Failure) -> [(user: String, tags: [String])] {
        try accountItems(body, key: "UserTags", field: "Tags", command: command) { try tags($0, "Tags", allowEmpty: false) }.map { ($0.user, $0.value) }
    }

    /// `KEY: [{To_Account, FIELD}]`: 1–100 items, each account once, each item's `FIELD` read by `read`.
    /// - Parameters:
    ///   - body: the request body.
    ///   - key: the list's key (`UserTags`, `UserAttrs`).
    ///   - field: each item's other key (`Tags`, `Attrs`).
    ///   - command: the command (for the error text).
    ///   - read: reads an item's `field`.
    /// - Throws: ``Failure`` with Tencent's code and the pointer.
    static func accountItems<T>(
        _ body: JSONValue, key: String, field: String, command: Command, read: (FieldReader) throws -> T
    ) throws(Failure) -> [(user: String, value: T)] {
        return try reading(code: 90001) {
            let r = try FieldReader(body, at: .root, what: "the request body, a JSON object")
            try r.allowOnly([key], context: command.rawValue)
            let expected = "\(key), an array of 1–\(maximumTagAccounts) {\"To_Account\", \"\(field)\"}"
            let list = try r.array(key, expected: expected)
            guard (1...maximumTagAccounts).contains(list.count) else {
                throw Failure(code: list.isEmpty ? 90001 : 90018, InputError(.outOfRange, at: .root / key, expected: expected, found: "\(list.count) items"))
            }
            var seen = Set<String>()
            return try list.enumerated().map { i, value in
                let item = try FieldReader(value, at: .root / key / i, what: "{\"To_Account\", \"\(field)\"}")
                try item.allowOnly(["To_Account", field], context: "a \(key) item")
                let user = try userID(try item.string("To_Account", expected: "the account's UserID"), at: item.pointer / "To_Account")
                guard seen.insert(user).inserted else {
                    throw InputError(.invalidValue, at: item.pointer / "To_Account", expected: "each account once", found: JSONValue.string(user).compactText)
                }
                return (user, try read(item))
            }
        }
    }

    /// `To_Account: […]` of `im_get_tag` / `im_remove_all_tags`: 1–100 distinct accounts.
    /// - Parameters:
    ///   - body: the request body.
    ///   - command: the command (for the error text).
    /// - Throws: ``Failure`` with Tencent's code and the pointer.
    public static func tagAccounts(_ body: JSONValue, command: Command) throws(Failure) -> [String] {
        return try reading(code: 90001) {
            let r = try FieldReader(body, at: .root, what: "the request body, a JSON object")
            try r.allowOnly(["To_Account"], context: command.rawValue)
            let expected = "To_Account, an array of 1–\(maximumTagAccounts) UserIDs"
            let list = try r.stringArray("To_Account", expected: expected, allowEmpty: false)
            guard list.count <= maximumTagAccounts else {
                throw Failure(code: 90018, InputError(.outOfRange, at: .root / "To_Account", expected: expected, found: "\(list.count) accounts"))
            }
            var seen = Set<String>()
            for (i, user) in list.enumerated() {
                _ = try userID(user, at: .root / "To_Account" / i)
                guard seen.insert(user).inserted else { throw InputError(.invalidValue, at: .root / "To_Account" / i, expected: "each account once", found: JSONValue.string(user).compactText) }
            }
            return list
        }
    }

    /// `AttrNames: {"0".."9": name}` of `im_set_attr_name`.
    /// - Parameter body: the request body.
    /// - Throws: ``Failure`` with Tencent's code and the pointer.
    public static func attributeNames(_ body: JSONValue) throws(Failure) -> [(slot: Int, name: String)] {
        return try reading(code: 90001) {
            let r = try FieldReader(body, at: .root, what: "the request body, a JSON object")
            try r.allowOnly(["AttrNames"], context: Command.setAttributeNames.rawValue)
            let expected = "AttrNames, an object of slots \"0\"–\"9\" and names of 1–\(maximumTagBytes) bytes"
            let names = try r.object("AttrNames", expected: expected)
            guard !names.object.isEmpty else { throw InputError(.invalidValue, at: names.pointer, expected: expected, found: "{}") }
            var seen = Set<String>()
            return try names.object.map { key, value in
                guard let slot = Int(key), (0...9).contains(slot), key == String(slot) else {
                    throw InputError(.invalidValue, at: names.pointer / key, expected: expected, found: JSONValue.string(key).compactText)
                }
                guard case .string(let name) = value else { throw InputError(.wrongType, at: names.pointer / key, expected: expected, found: value.briefDescription) }
                try attributeText(name, at: names.pointer / key, expected: expected)
                guard seen.insert(name).inserted else { throw Failure(code: 90033, InputError(.invalidValue, at: names.pointer / key, expected: "each name once", found: JSONValue.string(name).compactText)) }
                return (slot, name)
            }.sorted { $0.0 < $1.0 }
        }
    }

    /// `UserAttrs: [{To_Account, Attrs}]` of `im_set_attr` (`Attrs` `{name: value}`) or `im_remove_attr`
    /// (`Attrs` `[name]`): 1–100 accounts.
    /// - Parameters:
    ///   - body: the request body.
    ///   - command: `setAttributes` or `removeAttributes`.
    /// - Throws: ``Failure`` with Tencent's code and the pointer.
    public static func userAttributes(_ body: JSONValue, command: Command) throws(Failure) -> [(user: String, values: [UserAttribute])] {
        try accountItems(body, key: "UserAttrs", field: "Attrs", command: command) { item -> [UserAttribute] in
            guard command == .removeAttributes else { return try attributeValues(item, "Attrs") }
            let names = try item.stringArray("Attrs", expected: "Attrs, an array of attribute names", allowEmpty: false)
            for (j, name) in names.enumerated() { try attributeText(name, at: item.pointer / "Attrs" / j, expected: "an attribute name of 1–\(maximumTagBytes) bytes") }
            return names.map { UserAttribute(name: $0, value: "") }
        }.map { ($0.user, $0.value) }
    }

    /// An empty body (`im_get_attr_name`'s `{}`).
    /// - Parameters:
    ///   - body: the request body.
    ///   - command: the command (for the error text).
    /// - Throws: ``Failure`` 90001 for any field.
    public static func emptyBody(_ body: JSONValue, command: Command) throws(Failure) {
        try reading(code: 90001) { try FieldReader(body, at: .root, what: "the request body, {}").allowOnly([], context: command.rawValue) }
    }

    /// `MsgRandom` of a stored task body (0 when absent).
    /// - Parameter stored: `PushTask.request`.
    public static func storedRandom(_ stored: [UInt8]) -> Int64 {
        guard case .object(let body)? = try? JSONParser.parse(stored), case .int(let random)? = body["MsgRandom"] else { return 0 }
        return random
    }

    // MARK: Parts

    /// `Condition`: `TagsAnd` / `TagsOr` (1–10 tags each, none in both), or `AttrsAnd` / `AttrsOr`
    /// (`{name: value}`); tags with attributes are 90039.
    static func condition(_ r: FieldReader) throws -> TaskAudience {
        guard let condition = try r.optionalObject("Condition", expected: "Condition {TagsAnd, TagsOr} or {AttrsAnd, AttrsOr}") else { return .everyUser }
        try condition.allowOnly(["TagsAnd", "TagsOr", "AttrsAnd", "AttrsOr"], context: "Condition")
        let hasTags = condition.has("TagsAnd") || condition.has("TagsOr")
        if condition.has("AttrsAnd") || condition.has("AttrsOr") {
            if hasTags {
                throw Failure(code: 90039, InputError(.invalidValue, at: condition.pointer, expected: "tags or attributes, not both", found: "both"))
            }
            let all = try condition.has("AttrsAnd") ? attributeValues(condition, "AttrsAnd") : []
            let any = try condition.has("AttrsOr") ? attributeValues(condition, "AttrsOr") : []
            return TaskAudience(attributes: all, anyAttributes: any)
        }
        let all = try condition.has("TagsAnd") ? tags(condition, "TagsAnd", allowEmpty: false) : []
        let any = try condition.has("TagsOr") ? tags(condition, "TagsOr", allowEmpty: false) : []
        if let i = any.firstIndex(where: all.contains) {
            throw Failure(code: 90022, InputError(.invalidValue, at: condition.pointer / "TagsOr" / i, expected: "a tag TagsAnd does not name", found: JSONValue.string(any[i]).compactText))
        }
        guard !all.isEmpty || !any.isEmpty else {
            throw Failure(code: 90040, InputError(.invalidValue, at: condition.pointer, expected: "TagsAnd or TagsOr with a tag", found: "no tag"))
        }
        return TaskAudience(all: all, any: any)
    }

    /// 1–10 distinct tags of 1–50 bytes, no control characters.
    static func tags(_ r: FieldReader, _ key: String, allowEmpty: Bool) throws -> [String] {
        let expected = "\(key), an array of 1–\(maximumRequestTags) distinct tags of 1–\(maximumTagBytes) bytes"
        let list = try r.stringArray(key, expected: expected, allowEmpty: allowEmpty)
        guard list.count <= maximumRequestTags else {
            throw Failure(code: 90032, InputError(.outOfRange, at: r.pointer / key, expected: expected, found: "\(list.count) tags"))
        }
        for (i, tag) in list.enumerated() {
            let at = r.pointer / key / i
            if tag.isEmpty { throw Failure(code: 90040, InputError(.invalidValue, at: at, expected: expected, found: "an empty tag")) }
            if tag.utf8.count > maximumTagBytes { throw Failure(code: 90020, InputError(.outOfRange, at: at, expected: expected, found: "\(tag.utf8.count) bytes")) }
            if let violation = IdentifierRule.violation(in: tag) { throw InputError(.invalidValue, at: at, expected: expected, found: violation) }
            guard !list[..<i].contains(tag) else { throw Failure(code: 90022, InputError(.invalidValue, at: at, expected: expected, found: JSONValue.string(tag).compactText)) }
        }
        return list
    }

    /// `{name: value}`: 1–10 attributes, names and values of 1–50 bytes (90033).
    static func attributeValues(_ r: FieldReader, _ key: String) throws -> [UserAttribute] {
        let expected = "\(key), an object of 1–\(maximumRequestTags) attribute names and their values (1–\(maximumTagBytes) bytes each)"
        let values = try r.object(key, expected: expected)
        guard (1...maximumRequestTags).contains(values.object.count) else {
            throw Failure(code: 90033, InputError(.outOfRange, at: values.pointer, expected: expected, found: "\(values.object.count) attributes"))
        }
        return try values.object.map { name, value in
            guard case .string(let text) = value else { throw InputError(.wrongType, at: values.pointer / name, expected: "the attribute's value, a string", found: value.briefDescription) }
            try attributeText(name, at: values.pointer / name, expected: expected)
            try attributeText(text, at: values.pointer / name, expected: expected)
            return UserAttribute(name: name, value: text)
        }
    }

    /// An attribute's name or value: 1–50 bytes, no control character (90033).
    static func attributeText(_ text: String, at pointer: JSONPointer, expected: String) throws {
        guard !text.isEmpty, text.utf8.count <= maximumTagBytes, IdentifierRule.violation(in: text) == nil else {
            throw Failure(code: 90033, InputError(.invalidValue, at: pointer, expected: expected, found: JSONValue.string(text).compactText))
        }
    }

    static func msgRandom(_ r: FieldReader) throws -> Int64 {
        guard case .int(let random)? = r.value("MsgRandom"), (0...Int64(UInt32.max)).contains(random) else {
            throw Failure(code: 90005, InputError(r.has("MsgRandom") ? .invalidValue : .missingKey, at: .root / "MsgRandom", expected: "MsgRandom, a 32-bit unsigned integer"))
        }
        return random
    }

    static func dataID(_ r: FieldReader) throws {
        guard let id = try r.optionalString("DataId", expected: "DataId, up to \(maximumDataIDBytes) bytes") else { return }
        guard id.utf8.count <= maximumDataIDBytes else {
            throw Failure(code: 90057, InputError(.outOfRange, at: .root / "DataId", expected: "DataId, up to \(maximumDataIDBytes) bytes", found: "\(id.utf8.count) bytes"))
        }
    }

    /// A push without a message (`timpush`): one custom element whose push text is
    /// `OfflinePushInfo.Desc` (`Title` without one), so the `tencent-tim` rules push it.
    static func pushOnlyBody(_ r: FieldReader) throws -> JSONValue {
        guard let info = try r.optionalObject("OfflinePushInfo", expected: "OfflinePushInfo {PushFlag, Title, Desc, Ext, ApnsInfo}") else {
            throw InputError(.missingKey, at: .root / "OfflinePushInfo", expected: "OfflinePushInfo with Desc or Title (a push without MsgBody is its OfflinePushInfo)")
        }
        let text = try info.optionalString("Desc") ?? info.optionalString("Title") ?? ""
        return .array([.object(JSONObject([("MsgType", "TIMCustomElem"), ("MsgContent", .object(JSONObject([("Data", ""), ("Desc", .string(text))])))]))])
    }

    /// A message never pushed offline (`OnlineOnlyFlag` 1).
    static func onlineOnly(_ message: VendorMessage) -> VendorMessage {
        var sent = message
        guard case .object(var o) = sent.message else { return sent }
        var push: JSONObject
        if case .object(let existing)? = o["offlinePushInfo"] { push = existing } else { push = JSONObject([]) }
        push["pushFlag"] = 1
        o["offlinePushInfo"] = .object(push)
        sent.message = .object(o)
        return sent
    }
}
