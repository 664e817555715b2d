import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeVendorREST

/// Tencent Cloud IM server REST (Specification §12, vendor facts §3.3): `openim/sendmsg`,
/// `openim/batchsendmsg` and `group_open_http_svc/send_group_msg` as `tencent-tim` messages
/// (`MsgBody` elements → `elems`, `OfflinePushInfo` → `offlinePushInfo` with `ApnsInfo` →
/// `iosConfig`). Errors are ``TencentREST/Failure``s with Tencent's error codes.
public enum TencentREST {
    /// The most receivers `batchsendmsg` takes.
    public static let maximumBatch = 500

    /// A refused request: Tencent's error code, and a message naming the JSON pointer.
    public struct Failure: Error, Hashable, Sendable {
        /// Tencent's `ErrorCode`.
        public var code: Int
        /// Tencent's `ErrorInfo` (PushBridge's text: the pointer, what was expected, what was found).
        public var info: String

        /// - Parameters:
        ///   - code: the error code.
        ///   - info: the error text.
        public init(code: Int, info: String) {
            self.code = code
            self.info = info
        }

        /// A bad field: `code` with the error's pointer and expectation.
        public init(code: Int, _ error: InputError) {
            self.init(code: code, info: error.vendorText)
        }
    }

    /// The commands PushBridge answers, as `service/command`.
    public enum Command: String, CaseIterable, Sendable {
        case sendMessage = "openim/sendmsg"
        case batchSendMessage = "openim/batchsendmsg"
        case sendGroupMessage = "group_open_http_svc/send_group_msg"
        case importAccount = "im_open_login_svc/account_import"
        case importAccounts = "im_open_login_svc/multiaccount_import"
        case deleteAccounts = "im_open_login_svc/account_delete"
        case checkAccounts = "im_open_login_svc/account_check"
        case createGroup = "group_open_http_svc/create_group"
        case addGroupMember = "group_open_http_svc/add_group_member"
        case deleteGroupMember = "group_open_http_svc/delete_group_member"
        case destroyGroup = "group_open_http_svc/destroy_group"
        case getGroupMemberInfo = "group_open_http_svc/get_group_member_info"
        case modifyGroupMemberInfo = "group_open_http_svc/modify_group_member_info"
        case pushToAll = "all_member_push/im_push"
        case addTags = "all_member_push/im_add_tag"
        case getTags = "all_member_push/im_get_tag"
        case removeTags = "all_member_push/im_remove_tag"
        case removeAllTags = "all_member_push/im_remove_all_tags"
        case setAttributeNames = "all_member_push/im_set_attr_name"
        case getAttributeNames = "all_member_push/im_get_attr_name"
        case getAttributes = "all_member_push/im_get_attr"
        case setAttributes = "all_member_push/im_set_attr"
        case removeAttributes = "all_member_push/im_remove_attr"
        case timPush = "timpush/push"
        case timPushBatch = "timpush/batch"

        /// Whether the command registers, removes or checks accounts (the login service).
        public var isAccountCommand: Bool { rawValue.hasPrefix("im_open_login_svc/") }
        /// Whether the command is one of the group service's (`group_open_http_svc`).
        public var isGroupCommand: Bool { rawValue.hasPrefix("group_open_http_svc/") }
        /// Whether the command pushes to many users or manages their tags (`all_member_push`, `timpush`).
        public var isCampaignCommand: Bool { rawValue.hasPrefix("all_member_push/") || rawValue.hasPrefix("timpush/") }
        /// Whether the command manages groups (every group command but `send_group_msg`).
        public var managesGroups: Bool { isGroupCommand && self != .sendGroupMessage }

        /// Tencent's code for a malformed body of this command: 10011 (group), 70402 (accounts), 90001 (messages).
        public var jsonCode: Int { isGroupCommand ? 10011 : isAccountCommand ? 70402 : 90001 }
        /// Tencent's code for a body of the wrong shape: 10004 (group), 70402 (accounts) or 90010.
        var shapeCode: Int { isGroupCommand ? 10004 : isAccountCommand ? 70402 : 90010 }
        /// Tencent's code for a bad `MsgBody`: 10004 (group) or 90002.
        var bodyCode: Int { isGroupCommand ? 10004 : 90002 }
    }

    /// Reads a body with Tencent's codes: a bad field is `code` (10004 for group commands, 90001 for
    /// pushes) unless a ``Failure`` names its own.
    /// - Parameters:
    ///   - code: the code of a bad field.
    ///   - body: the reading.
    static func reading<T>(code: Int, _ body: () throws -> T) throws(Failure) -> T {
        do {
            return try body()
        } catch let failure as Failure {
            throw failure
        } catch let error as InputError {
            throw Failure(code: code, error)
        } catch {
            throw Failure(code: code, info: "\(error)")
        }
    }

    /// The most accounts one account command takes.
    public static let maximumAccounts = 100

    /// One account of an account command, and the `tencent-tim` calls its fields become.
    public struct Account: Sendable {
        public var id: String
        public var calls: [JSONValue]
    }

    /// Tencent's UserID rule (SDK error 7003): 1–32 bytes of printable ASCII (0x20–0x7E), so no
    /// control character either.
    /// - Parameters:
    ///   - id: the UserID.
    ///   - pointer: where it is.
    static func userID(_ id: String, at pointer: JSONPointer) throws -> String {
        guard (1...32).contains(id.utf8.count), id.utf8.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else {
            throw InputError(.invalidValue, at: pointer, expected: "a UserID of 1–32 printable ASCII bytes", found: JSONValue.string(id).compactText)
        }
        return id
    }

    /// Tencent's GroupId rule (`create_group`): 1–48 bytes of printable ASCII, which the
    /// generated `@TGS#…` ids follow too.
    /// - Parameters:
    ///   - id: the GroupId.
    ///   - pointer: where it is.
    static func groupID(_ id: String, at pointer: JSONPointer) throws -> String {
        guard (1...48).contains(id.utf8.count), id.utf8.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else {
            throw InputError(.invalidValue, at: pointer, expected: "a GroupId of 1–48 printable ASCII bytes", found: JSONValue.string(id).compactText)
        }
        return id
    }

    /// The accounts of `account_import` (`UserID`, `Nick` → `modifySelfProfile`, `FaceUrl`),
    /// `multiaccount_import` (`Accounts`), `account_delete` (`DeleteItem`) or `account_check` (`CheckItem`).
    /// - Throws: ``Failure`` with 70402 (invalid parameters).
    public static func accounts(_ body: JSONValue, command: Command) throws(Failure) -> [Account] {
        do {
            let r = try FieldReader(body, at: .root, what: "the request body, a JSON object")
            func check(_ id: String, at pointer: JSONPointer) throws -> String { try userID(id, at: pointer) }
            func items(_ key: String) throws -> [String] {
                let list = try r.array(key, expected: "an array of 1–\(maximumAccounts) {\"UserID\"}")
                guard (1...maximumAccounts).contains(list.count) else {
                    throw InputError(.outOfRange, at: .root / key, expected: "1–\(maximumAccounts) items", found: "\(list.count) items")
                }
                return try list.enumerated().map { i, value in
                    let item = try FieldReader(value, at: .root / key / i, what: "{\"UserID\"}")
                    try item.allowOnly(["UserID"], context: "an item")
                    return try check(try item.string("UserID", expected: "the UserID"), at: item.pointer / "UserID")
                }
            }
            switch command {
            case .importAccount:
                try r.allowOnly(["UserID", "Nick", "FaceUrl"], context: command.rawValue)
                let id = try check(try r.string("UserID", expected: "the UserID"), at: .root / "UserID")
                _ = try r.optionalString("FaceUrl")
                let nick = try r.optionalString("Nick", expected: "the nickname")
                return [Account(id: id, calls: nick.map { [["call": "modifySelfProfile", "nick": .string($0)]] } ?? [])]
            case .importAccounts:
                try r.allowOnly(["Accounts"], context: command.rawValue)
                let list = try r.stringArray("Accounts", expected: "an array of 1–\(maximumAccounts) UserIDs", allowEmpty: false)
                guard list.count <= maximumAccounts else {
                    throw InputError(.outOfRange, at: .root / "Accounts", expected: "1–\(maximumAccounts) UserIDs", found: "\(list.count) UserIDs")
                }
                return try list.enumerated().map { Account(id: try check($1, at: .root / "Accounts" / $0), calls: []) }
            case .deleteAccounts:
                try r.allowOnly(["DeleteItem"], context: command.rawValue)
                return try items("DeleteItem").map { Account(id: $0, calls: []) }
            case .checkAccounts:
                try r.allowOnly(["CheckItem"], context: command.rawValue)
                return try items("CheckItem").map { Account(id: $0, calls: []) }
            default:
                throw InputError(.invalidValue, at: .root, expected: "an account command", found: command.rawValue)
            }
        } catch let error as InputError {
            throw Failure(code: 70402, error)
        } catch {
            throw Failure(code: 70402, info: "\(error)")
        }
    }

    static let element: [String: (keys: [String], type: String)] = [
        "TIMTextElem": (["Text"], "Text"),
        "TIMLocationElem": (["Desc", "Latitude", "Longitude"], "Location"),
        "TIMFaceElem": (["Index", "Data"], "Face"),
        "TIMCustomElem": (["Data", "Desc", "Ext", "Sound"], "Custom"),
        "TIMSoundElem": ([], "Sound"), "TIMImageElem": ([], "Image"), "TIMFileElem": ([], "File"), "TIMVideoFileElem": ([], "Video"),
    ]

    static let sendKeys = [
        "SyncOtherMachine", "From_Account", "To_Account", "MsgSeq", "MsgRandom", "MsgTimeStamp", "MsgLifeTime", "ForbidCallbackControl",
        "SendMsgControl", "MsgBody", "CloudCustomData", "SupportMessageExtension", "OfflinePushInfo", "IsNeedReadReceipt", "TopicId",
    ]
    static let groupKeys = [
        "GroupId", "Random", "MsgPriority", "MsgBody", "From_Account", "OfflinePushInfo", "ForbidCallbackControl", "OnlineOnlyFlag",
        "SendMsgControl", "CloudCustomData", "SupportMessageExtension", "To_Account", "TopicId", "NeedReadReceipt", "GroupAtInfo",
    ]

    /// A send as `tencent-tim` messages.
    /// - Parameters:
    ///   - body: the request body.
    ///   - command: the command.
    ///   - administrator: the sender when `From_Account` is absent.
    ///   - newID: the message ids to use; by default each is made from the sender, the receiver or
    ///     group and `MsgRandom` / `Random` (Tencent's de-duplication key), so a retried request is a repeat.
    /// - Throws: ``Failure``.
    public static func messages(_ body: JSONValue, command: Command, administrator: String, newID: (() -> String)? = nil) throws(Failure) -> [VendorMessage] {
        do {
            return try read(body, command: command, administrator: administrator, newID: newID)
        } catch let failure as Failure {
            throw failure
        } catch let error as InputError {
            throw Failure(code: command.shapeCode, error)
        } catch {
            throw Failure(code: command.shapeCode, info: "\(error)")
        }
    }

    static func read(_ body: JSONValue, command: Command, administrator: String, newID: (() -> String)?) throws -> [VendorMessage] {
        let r = try FieldReader(body, at: .root, what: "the request body, a JSON object")
        try r.allowOnly(command == .sendGroupMessage ? groupKeys : sendKeys, context: command.rawValue)
        let sender = try r.optionalString("From_Account", expected: "the sender's UserID", allowEmpty: false).map { try userID($0, at: .root / "From_Account") } ?? administrator
        let randomKey = command == .sendGroupMessage ? "Random" : "MsgRandom"
        guard case .int(let random)? = r.value(randomKey), (0...Int64(UInt32.max)).contains(random) else {
            throw Failure(
                code: command == .sendGroupMessage ? 10004 : 90005,
                InputError(.missingKey, at: .root / randomKey, expected: "\(randomKey), a 32-bit unsigned integer"))
        }
        for key in ["SyncOtherMachine", "MsgSeq", "MsgTimeStamp", "MsgLifeTime", "SupportMessageExtension", "IsNeedReadReceipt", "MsgPriority"]
        where r.has(key) {
            if key == "MsgPriority" { _ = try r.string(key, expected: "High, Normal or Low") } else { _ = try r.int(key, in: 0...Int64(UInt32.max), expected: "an integer") }
        }
        for key in ["ForbidCallbackControl", "SendMsgControl"] where r.has(key) { _ = try r.stringArray(key) }
        if r.has("CloudCustomData") { _ = try r.string("CloudCustomData", expected: "a string") }
        let onlineOnly = try r.optionalInt("OnlineOnlyFlag", in: 0...1, expected: "0 or 1") == 1

        let (elems, customPush) = try elements(r, command: command)
        var push = try offlinePushInfo(r) ?? customPush
        if onlineOnly { push.append(("pushFlag", 1)) }  // an online-only message is never pushed offline

        func message(id derived: String, conversation: JSONValue, targets: [String], isGroup: Bool) -> VendorMessage {
            var o: [(key: String, value: JSONValue)] = [("id", .string(newID?() ?? derived)), ("conversation", conversation), ("sender", .string(sender)), ("elems", .array(elems))]
            if !push.isEmpty { o.append(("offlinePushInfo", .object(JSONObject(push)))) }
            return VendorMessage(dialect: "tencent-tim", message: .object(JSONObject(o)), sender: sender, targets: targets, isGroup: isGroup)
        }
        switch command {
        case .sendMessage:
            let to = try userID(try r.string("To_Account", expected: "the receiver's UserID", allowEmpty: false), at: .root / "To_Account")
            return [message(id: "c2c-\(sender)-\(to)-\(random)", conversation: ["type": "C2C", "id": .string(to)], targets: [to], isGroup: false)]
        case .batchSendMessage:
            let expected = "an array of 1–\(maximumBatch) receiver UserIDs"
            let list = try r.stringArray("To_Account", expected: expected, allowEmpty: false)
            guard list.count <= maximumBatch else {
                throw Failure(code: 90011, InputError(.outOfRange, at: .root / "To_Account", expected: expected, found: "\(list.count) accounts"))
            }
            var seen = Set<String>()
            for (i, to) in list.enumerated() {
                _ = try userID(to, at: .root / "To_Account" / i)
                guard seen.insert(to).inserted else {
                    throw InputError(.invalidValue, at: .root / "To_Account" / i, expected: "distinct, non-empty UserIDs", found: JSONValue.string(to).compactText)
                }
            }
            return list.map { to in
                message(id: "c2c-\(sender)-\(to)-\(random)", conversation: ["type": "C2C", "id": .string(to)], targets: [to], isGroup: false)
            }
        case .sendGroupMessage:
            let group = try groupID(try r.string("GroupId", expected: "the group's GroupId", allowEmpty: false), at: .root / "GroupId")
            var sent = message(id: "group-\(group)-\(sender)-\(random)", conversation: ["type": "Group", "id": .string(group)], targets: [group], isGroup: true)
            if r.has("To_Account") {
                // A targeted group message (`createTargetedGroupMessage`): only the listed members
                // receive it, and it is not counted as unread (the dialect says so).
                let expected = "To_Account, an array of 1–\(TencentTIMAdapter.maximumTargetedReceivers) distinct member UserIDs"
                let list = try r.stringArray("To_Account", expected: expected, allowEmpty: false)
                guard list.count <= TencentTIMAdapter.maximumTargetedReceivers else {
                    throw InputError(.outOfRange, at: .root / "To_Account", expected: expected, found: "\(list.count) accounts")
                }
                var seen = Set<String>()
                for (i, to) in list.enumerated() {
                    _ = try userID(to, at: .root / "To_Account" / i)
                    guard seen.insert(to).inserted else { throw InputError(.invalidValue, at: .root / "To_Account" / i, expected: "each member once", found: JSONValue.string(to).compactText) }
                }
                if case .object(var o) = sent.message {
                    o["receiverList"] = .array(list.map(JSONValue.string))
                    sent.message = .object(o)
                }
            }
            return [sent]
        default:
            throw InputError(.invalidValue, at: .root, expected: "a message command", found: command.rawValue)
        }
    }

    /// `MsgBody` → `elems`, and the push settings of a single custom element (used when the
    /// request has no `OfflinePushInfo`, which replaces them).
    static func elements(_ r: FieldReader, command: Command) throws -> ([JSONValue], [(key: String, value: JSONValue)]) {
        let expected = "MsgBody, a non-empty array of {\"MsgType\", \"MsgContent\"}"
        guard case .array(let list)? = r.value("MsgBody") else {
            throw Failure(code: command.bodyCode, InputError(r.has("MsgBody") ? .wrongType : .missingKey, at: .root / "MsgBody", expected: expected))
        }
        guard !list.isEmpty else { throw Failure(code: command.bodyCode, InputError(.invalidValue, at: .root / "MsgBody", expected: expected, found: "an empty array")) }
        var elems: [JSONValue] = []
        var customPush: [(key: String, value: JSONValue)] = []
        let types = element.keys.sorted().joined(separator: ", ")
        do {
            for (i, value) in list.enumerated() {
                let e = try FieldReader(value, at: .root / "MsgBody" / i, what: "{\"MsgType\", \"MsgContent\"}")
                try e.allowOnly(["MsgType", "MsgContent"], context: "a MsgBody element")
                let type = try e.string("MsgType", expected: types)
                guard let shape = element[type] else { throw InputError(.invalidValue, at: e.pointer / "MsgType", expected: types, found: JSONValue.string(type).compactText) }
                let content = try e.object("MsgContent", expected: "the \(type) content object")
                // Media elements carry descriptors (URLs, sizes, UUIDs) that differ by version: any keys.
                if !shape.keys.isEmpty { try content.allowOnly(shape.keys, context: type) }
                var elem: [(key: String, value: JSONValue)] = [("type", .string(shape.type))]
                switch type {
                case "TIMTextElem": elem.append(("text", .string(try content.string("Text", expected: "the text"))))
                case "TIMLocationElem":
                    if let desc = try content.optionalString("Desc") { elem.append(("desc", .string(desc))) }
                    for key in ["Latitude", "Longitude"] where content.has(key) {
                        guard case .int = content.value(key)! else {
                            if case .double = content.value(key)! { continue }
                            throw InputError(.wrongType, at: content.pointer / key, expected: "a number", found: content.value(key)!.briefDescription)
                        }
                    }
                case "TIMFaceElem":
                    if content.has("Index") { _ = try content.int("Index", in: Int64(Int32.min)...Int64(Int32.max), expected: "the face index") }
                    if let data = try content.optionalString("Data") { elem.append(("data", .string(data))) }
                case "TIMCustomElem":
                    if let data = try content.optionalString("Data") { elem.append(("data", .string(data))) }
                    if let desc = try content.optionalString("Desc") { elem.append(("desc", .string(desc))) }
                    if list.count == 1 {
                        if let ext = try content.optionalString("Ext") { customPush.append(("ext", .string(ext))) }
                        if let sound = try content.optionalString("Sound") { customPush.append(("iosConfig", ["sound": .string(sound)])) }
                    } else {
                        _ = try content.optionalString("Ext")
                        _ = try content.optionalString("Sound")
                    }
                default: break
                }
                elems.append(.object(JSONObject(elem)))
            }
        } catch let error as InputError {
            throw Failure(code: command.bodyCode, error)
        }
        return (elems, customPush)
    }

    /// `OfflinePushInfo` → `offlinePushInfo`; `nil` when absent.
    static func offlinePushInfo(_ r: FieldReader) throws -> [(key: String, value: JSONValue)]? {
        guard let info = try r.optionalObject("OfflinePushInfo", expected: "OfflinePushInfo {PushFlag, Title, Desc, Ext, AndroidInfo, ApnsInfo}") else { return nil }
        try info.allowOnly(["PushFlag", "Title", "Desc", "Ext", "AndroidInfo", "ApnsInfo"], context: "OfflinePushInfo")
        var out: [(key: String, value: JSONValue)] = []
        if let flag = try info.optionalInt("PushFlag", in: 0...1, expected: "0 (push) or 1 (no offline push)") { out.append(("pushFlag", .int(Int64(flag)))) }
        if let title = try info.optionalString("Title") { out.append(("title", .string(title))) }
        if let desc = try info.optionalString("Desc") { out.append(("desc", .string(desc))) }
        if let ext = try info.optionalString("Ext") { out.append(("ext", .string(ext))) }
        if let android = try info.optionalObject("AndroidInfo", expected: "AndroidInfo, an object") { out.append(("androidConfig", .object(android.object))) }
        if let apns = try info.optionalObject("ApnsInfo", expected: "ApnsInfo {Sound, BadgeMode, Title, SubTitle, Image, MutableContent}") {
            try apns.allowOnly(["Sound", "BadgeMode", "Title", "SubTitle", "Image", "MutableContent"], context: "ApnsInfo")
            var ios: [(key: String, value: JSONValue)] = []
            if let sound = try apns.optionalString("Sound") { ios.append(("sound", .string(sound))) }
            if let mode = try apns.optionalInt("BadgeMode", in: 0...1, expected: "0 (counts toward the badge) or 1 (does not)") {
                ios.append(("ignoreBadge", .bool(mode == 1)))
            }
            if let title = try apns.optionalString("Title") { ios.append(("title", .string(title))) }
            if let subtitle = try apns.optionalString("SubTitle") { ios.append(("subtitle", .string(subtitle))) }
            if let image = try apns.optionalString("Image") { ios.append(("image", .string(image))) }
            if let mutable = try apns.optionalInt("MutableContent", in: 0...1, expected: "0 or 1 (the notification service extension)") {
                ios.append(("mutableContent", .bool(mutable == 1)))
            }
            if !ios.isEmpty { out.append(("iosConfig", .object(JSONObject(ios)))) }
        }
        return out
    }
}
