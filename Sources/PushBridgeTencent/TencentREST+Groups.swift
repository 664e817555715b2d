import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeVendorREST

// Tencent Cloud IM group REST (Specification §14; vendor REST facts §4): `group_open_http_svc` bodies read
// into what the service writes. Errors are ``TencentREST/Failure``s with Tencent's group codes.
extension TencentREST {
    /// The group types `create_group` takes (`Work` and `Meeting` are the newer names of Private and ChatRoom).
    public static let groupTypes = ["Private", "Public", "ChatRoom", "AVChatRoom", "Community", "Work", "Meeting"]
    /// The most members `create_group` lists.
    public static let maximumCreateMembers = 100
    /// The most members one `add_group_member` adds.
    public static let maximumAddMembers = 300
    /// The most members one `delete_group_member` removes.
    public static let maximumDeleteMembers = 100
    /// The member limit a group gets without `MaxMemberCount`.
    public static let defaultMaxMemberCount = 2000

    /// `MsgFlag` values and the canonical remind type each is (`nil`: inherit the app's).
    public enum MessageFlag: String, CaseIterable, Sendable {
        case acceptAndNotify = "AcceptAndNotify"
        case acceptNotNotify = "AcceptNotNotify"
        case acceptNotNotifyExceptAt = "AcceptNotNotifyExceptAt"
        case discard = "Discard"

        /// The remind type a member's conversation with the group gets.
        public var remindType: RemindType? {
            switch self {
            case .acceptAndNotify: return nil
            case .acceptNotNotify, .discard: return RemindType.none
            case .acceptNotNotifyExceptAt: return .mentionOnly
            }
        }
    }

    /// A group as `create_group` makes it.
    public struct GroupCreation: Sendable {
        public var groupID: String?
        public var name: String
        public var type: String
        public var owner: String?
        /// The members listed, with whether each is an admin.
        public var members: [(id: String, admin: Bool)]
        public var maxMembers: Int
        /// `Type`, `Introduction`, `Notification`, `FaceUrl`, `ApplyJoinOption` as given.
        public var fields: JSONObject
    }

    /// A change of `modify_group_member_info`.
    public struct MemberChange: Sendable {
        public var group: String
        public var member: String
        public var admin: Bool?
        public var flag: MessageFlag?
        public var nameCard: String?
    }

    /// `create_group`: `Owner_Account`, `Type`, `GroupId`, `Name` (≤ 30 bytes), `Introduction`,
    /// `Notification`, `FaceUrl`, `MaxMemberCount`, `ApplyJoinOption`, `MemberList` (≤ 100).
    public static func groupCreation(_ body: JSONValue) throws(Failure) -> GroupCreation {
        try reading(code: 10004) {
            let r = try FieldReader(body, at: .root, what: "the request body, a JSON object")
            try r.allowOnly(
                ["Owner_Account", "Type", "GroupId", "Name", "Introduction", "Notification", "FaceUrl", "MaxMemberCount", "ApplyJoinOption",
                 "InviteJoinOption", "MemberList", "AppDefinedData", "SupportTopic"],
                context: "create_group")
            let type = try r.string("Type", expected: "the group type: " + groupTypes.joined(separator: ", "))
            guard groupTypes.contains(type) else {
                throw InputError(.invalidValue, at: .root / "Type", expected: "one of " + groupTypes.joined(separator: ", "), found: JSONValue.string(type).compactText)
            }
            let name = try r.string("Name", expected: "the group name, 1–30 bytes", allowEmpty: false)
            try bytes(name, 30, at: .root / "Name")
            let owner = try r.optionalString("Owner_Account", expected: "the owner's UserID", allowEmpty: false).map { try userID($0, at: .root / "Owner_Account") }
            let groupID = try r.optionalString("GroupId", expected: "a custom GroupId", allowEmpty: false).map { try TencentREST.groupID($0, at: .root / "GroupId") }
            if let groupID, groupID.hasPrefix("@TGS#") {
                throw InputError(.invalidValue, at: .root / "GroupId", expected: "a custom GroupId not starting with @TGS# (those are generated)", found: JSONValue.string(groupID).compactText)
            }
            var fields: [(key: String, value: JSONValue)] = [("Type", .string(type))]
            for (key, limit) in [("Introduction", 240), ("Notification", 300), ("FaceUrl", 100)] {
                if let text = try r.optionalString(key, expected: "a string of at most \(limit) bytes") {
                    try bytes(text, limit, at: .root / key)
                    fields.append((key, .string(text)))
                }
            }
            for key in ["ApplyJoinOption", "InviteJoinOption"] {
                if let option = try r.optionalString(key, expected: "FreeAccess, NeedPermission or DisableApply") {
                    guard ["FreeAccess", "NeedPermission", "DisableApply"].contains(option) else {
                        throw InputError(.invalidValue, at: .root / key, expected: "FreeAccess, NeedPermission or DisableApply", found: JSONValue.string(option).compactText)
                    }
                    fields.append((key, .string(option)))
                }
            }
            let maxMembers = try r.optionalInt("MaxMemberCount", in: 1...100_000, expected: "the member limit") ?? defaultMaxMemberCount
            var members: [(id: String, admin: Bool)] = []
            if r.has("MemberList") {
                let list = try r.array("MemberList", expected: "an array of at most \(maximumCreateMembers) {\"Member_Account\", \"Role\"?}")
                guard list.count <= maximumCreateMembers else {
                    throw InputError(.outOfRange, at: .root / "MemberList", expected: "at most \(maximumCreateMembers) members", found: "\(list.count) members")
                }
                if !list.isEmpty && (type == "AVChatRoom" || type == "Community") {
                    throw Failure(code: 10007, info: "/MemberList: a \(type) group is created without members")
                }
                var seen = Set<String>()
                for (i, value) in list.enumerated() {
                    let item = try FieldReader(value, at: .root / "MemberList" / i, what: "{\"Member_Account\", \"Role\"?}")
                    try item.allowOnly(["Member_Account", "Role", "AppMemberDefinedData"], context: "a member")
                    let id = try userID(try item.string("Member_Account", expected: "the member's UserID"), at: item.pointer / "Member_Account")
                    guard id != owner, seen.insert(id).inserted else {
                        throw InputError(.invalidValue, at: item.pointer / "Member_Account", expected: "each member once, the owner not listed", found: JSONValue.string(id).compactText)
                    }
                    let role = try item.optionalString("Role", expected: "\"Admin\"")
                    if let role, role != "Admin" { throw InputError(.invalidValue, at: item.pointer / "Role", expected: "\"Admin\" (or no Role)", found: JSONValue.string(role).compactText) }
                    members.append((id, role == "Admin"))
                }
            }
            return GroupCreation(groupID: groupID, name: name, type: type, owner: owner, members: members, maxMembers: maxMembers, fields: JSONObject(fields))
        }
    }

    /// `add_group_member` (`GroupId`, `Silence`, `MemberList` ≤ 300) or `delete_group_member`
    /// (`GroupId`, `Silence`, `Reason`, `MemberToDel_Account` ≤ 100): the group and the UserIDs.
    public static func memberList(_ body: JSONValue, command: Command) throws(Failure) -> (group: String, members: [String]) {
        try reading(code: 10004) {
            let r = try FieldReader(body, at: .root, what: "the request body, a JSON object")
            let adding = command == .addGroupMember
            try r.allowOnly(adding ? ["GroupId", "Silence", "MemberList"] : ["GroupId", "Silence", "Reason", "MemberToDel_Account"], context: command.rawValue)
            let group = try groupID(try r.string("GroupId", expected: "the GroupId", allowEmpty: false), at: .root / "GroupId")
            _ = try r.optionalInt("Silence", in: 0...1, expected: "0 or 1")
            if !adding { _ = try r.optionalString("Reason") }
            let key = adding ? "MemberList" : "MemberToDel_Account"
            let maximum = adding ? maximumAddMembers : maximumDeleteMembers
            let list = try r.array(key, expected: "an array of 1–\(maximum) members")
            guard (1...maximum).contains(list.count) else {
                throw InputError(.outOfRange, at: .root / key, expected: "1–\(maximum) members", found: "\(list.count) members")
            }
            var seen = Set<String>()
            return (group, try list.enumerated().map { i, value in
                let id: String
                if adding {
                    let item = try FieldReader(value, at: .root / key / i, what: "{\"Member_Account\"}")
                    try item.allowOnly(["Member_Account"], context: "a member")
                    id = try userID(try item.string("Member_Account", expected: "the member's UserID"), at: item.pointer / "Member_Account")
                } else {
                    guard case .string(let text) = value else { throw InputError(.wrongType, at: .root / key / i, expected: "a UserID string", found: value.briefDescription) }
                    id = try userID(text, at: .root / key / i)
                }
                guard seen.insert(id).inserted else { throw InputError(.invalidValue, at: .root / key / i, expected: "each member once", found: JSONValue.string(id).compactText) }
                return id
            })
        }
    }

    /// `destroy_group`: `{"GroupId"}`.
    public static func groupOnly(_ body: JSONValue) throws(Failure) -> String {
        try reading(code: 10004) {
            let r = try FieldReader(body, at: .root, what: "{\"GroupId\"}")
            try r.allowOnly(["GroupId"], context: "destroy_group")
            return try groupID(try r.string("GroupId", expected: "the GroupId", allowEmpty: false), at: .root / "GroupId")
        }
    }

    /// `get_group_member_info`: `GroupId`, `Limit` (≤ 6000), `Offset`; `MemberInfoFilter` and
    /// `MemberRoleFilter` accepted (every field is answered; roles filter).
    public static func memberInfo(_ body: JSONValue) throws(Failure) -> (group: String, limit: Int, offset: Int, roles: [String]?) {
        try reading(code: 10004) {
            let r = try FieldReader(body, at: .root, what: "{\"GroupId\", \"Limit\"?, \"Offset\"?}")
            try r.allowOnly(["GroupId", "MemberInfoFilter", "MemberRoleFilter", "AppDefinedDataFilter_GroupMember", "Limit", "Offset", "Next"], context: "get_group_member_info")
            let group = try groupID(try r.string("GroupId", expected: "the GroupId", allowEmpty: false), at: .root / "GroupId")
            if r.has("MemberInfoFilter") { _ = try r.stringArray("MemberInfoFilter") }
            let roles = try r.optionalStringArray("MemberRoleFilter", expected: "roles: Owner, Admin, Member")
            if let roles, let i = roles.firstIndex(where: { !["Owner", "Admin", "Member"].contains($0) }) {
                throw InputError(.invalidValue, at: .root / "MemberRoleFilter" / i, expected: "Owner, Admin or Member", found: JSONValue.string(roles[i]).compactText)
            }
            let limit = try r.optionalInt("Limit", in: 0...6000, expected: "at most 6000 members a page") ?? 6000
            let offset = try r.optionalInt("Offset", in: 0...Int64(Int32.max), expected: "a member offset") ?? 0
            return (group, limit == 0 ? 6000 : limit, offset, roles)
        }
    }

    /// `modify_group_member_info`: `GroupId`, `Member_Account`, `Role` (Admin / Member), `MsgFlag`,
    /// `NameCard` (≤ 50 bytes); `MuteTime` and `AppMemberDefinedData` accepted (no push effect).
    public static func memberChange(_ body: JSONValue) throws(Failure) -> MemberChange {
        try reading(code: 10004) {
            let r = try FieldReader(body, at: .root, what: "{\"GroupId\", \"Member_Account\", \"MsgFlag\"?, \"NameCard\"?, \"Role\"?}")
            try r.allowOnly(["GroupId", "Member_Account", "Role", "MsgFlag", "NameCard", "MuteTime", "AppMemberDefinedData"], context: "modify_group_member_info")
            let group = try groupID(try r.string("GroupId", expected: "the GroupId", allowEmpty: false), at: .root / "GroupId")
            let member = try userID(try r.string("Member_Account", expected: "the member's UserID"), at: .root / "Member_Account")
            var change = MemberChange(group: group, member: member)
            if let role = try r.optionalString("Role", expected: "Admin or Member") {
                guard role == "Admin" || role == "Member" else { throw InputError(.invalidValue, at: .root / "Role", expected: "Admin or Member", found: JSONValue.string(role).compactText) }
                change.admin = role == "Admin"
            }
            if let flag = try r.optionalString("MsgFlag", expected: MessageFlag.allCases.map(\.rawValue).joined(separator: ", ")) {
                guard let parsed = MessageFlag(rawValue: flag) else {
                    throw InputError(.invalidValue, at: .root / "MsgFlag", expected: MessageFlag.allCases.map(\.rawValue).joined(separator: ", "), found: JSONValue.string(flag).compactText)
                }
                change.flag = parsed
            }
            if let card = try r.optionalString("NameCard", expected: "the name card, at most 50 bytes") {
                try bytes(card, 50, at: .root / "NameCard")
                change.nameCard = card
            }
            _ = try r.optionalInt("MuteTime", in: 0...Int64(UInt32.max), expected: "seconds")
            if r.has("AppMemberDefinedData") { _ = try r.array("AppMemberDefinedData") }
            guard change.admin != nil || change.flag != nil || change.nameCard != nil || r.has("MuteTime") || r.has("AppMemberDefinedData") else {
                throw InputError(.missingKey, at: .root, expected: "a field to change: Role, MsgFlag, NameCard, MuteTime or AppMemberDefinedData")
            }
            return change
        }
    }

    /// A GroupId as Tencent generates them: `@TGS#` and 9 upper-case letters and digits.
    public static func newGroupID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return "@TGS#" + String((0..<9).map { _ in alphabet.randomElement()! })
    }

    static func bytes(_ text: String, _ limit: Int, at pointer: JSONPointer) throws {
        guard text.utf8.count <= limit else { throw InputError(.outOfRange, at: pointer, expected: "at most \(limit) bytes", found: "\(text.utf8.count) bytes") }
    }
}

extension TencentREST.MemberChange {
    init(group: String, member: String) {
        self.init(group: group, member: member, admin: nil, flag: nil, nameCard: nil)
    }
}
