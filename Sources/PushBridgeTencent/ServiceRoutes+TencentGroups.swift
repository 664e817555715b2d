import Hummingbird
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeServer
import PushBridgeVendorREST

extension ServiceRoutes {
    /// `group_open_http_svc` group management (Specification §14): the same membership the native API and
    /// the SDK dialects see; `MsgFlag` is the member's remind type for the group's conversation,
    /// `NameCard` its name card (`modifyGroupMemberInfoSetNameCard`). Each command is one write.
    func tencentGroups(_ body: JSONValue, command: TencentREST.Command, in tenant: AppTenant) async throws -> Response {
        switch command {
        case .createGroup:
            let creation = try TencentREST.groupCreation(body)
            let now = Instant.now
            let candidates = CandidateIDs { TencentREST.newGroupID() }
            let all = (creation.owner.map { [$0] } ?? []) + creation.members.map(\.id)
            let id = try await answering { () async throws -> String in
                try await tenant.update { facade in try await facade.edit(EditScope(users: all, groups: creation.groupID.map { [$0] } ?? candidates.ids)) { edit in
                    for user in all where try edit.user(user)?.isConfigured != true {
                        throw TencentREST.Failure(code: 10019, info: "account \(JSONWriter.quoted(user)) does not exist (import it first)")
                    }
                    let id: String
                    if let given = creation.groupID {
                        guard try !edit.groupExists(given) else { throw TencentREST.Failure(code: 10021, info: "GroupId \(JSONWriter.quoted(given)) is already used") }
                        id = given
                    } else {
                        id = try candidates.first(freeIn: edit)
                    }
                    guard all.count <= creation.maxMembers else { throw TencentREST.Failure(code: 10038, info: "\(all.count) members exceed MaxMemberCount \(creation.maxMembers)") }
                    var profile = GroupProfile(owner: creation.owner, name: creation.name, maxUsers: creation.maxMembers, createdAt: now, vendorFields: creation.fields)
                    profile.admins = creation.members.filter(\.admin).map(\.id)
                    try edit.setGroupProfile(profile, of: id)
                    if !all.isEmpty { try edit.setMembers(all, of: id) }
                    return id
                } }
            }
            return tencentOK([("GroupId", .string(id))], messages: "")
        case .addGroupMember:
            let (group, members) = try TencentREST.memberList(body, command: command)
            let results = try await answering { () async throws -> [Int] in
                try await tenant.update { facade in try await facade.edit(EditScope(users: members, groups: [group])) { edit in
                    let profile = try Self.tencentGroup(group, in: edit, refusing: ["AVChatRoom"], code: 10007)
                    let current = try edit.members(of: group)
                    var results: [Int] = []
                    var added: [UserID] = []
                    for member in members {
                        if current.contains(member) {
                            results.append(2)
                        } else if try edit.user(member)?.isConfigured != true {
                            results.append(0)  // the account does not exist
                        } else {
                            results.append(1)
                            added.append(member)
                        }
                    }
                    guard current.count + added.count <= profile.maxUsers else {
                        throw TencentREST.Failure(code: 10014, info: "the group is full (MaxMemberCount \(profile.maxUsers))")
                    }
                    if !added.isEmpty { try edit.addMembers(added, to: group) }
                    return results
                } }
            }
            let items: [JSONValue] = zip(members, results).map { .object(JSONObject([("Member_Account", .string($0)), ("Result", .int(Int64($1)))])) }
            return tencentOK([("MemberList", .array(items))], messages: "")
        case .deleteGroupMember:
            let (group, members) = try TencentREST.memberList(body, command: command)
            try await answering {
                try await tenant.update { facade in try await facade.edit(EditScope(groups: [group])) { edit in
                    let profile = try Self.tencentGroup(group, in: edit, refusing: ["AVChatRoom"], code: 10004)
                    if let owner = profile.owner, members.contains(owner) {
                        throw TencentREST.Failure(code: 10004, info: "/MemberToDel_Account: the owner \(JSONWriter.quoted(owner)) cannot be removed (transfer the group first)")
                    }
                    // A non-member is no error (Tencent); removing everyone keeps the group.
                    try edit.setMembers(try edit.members(of: group).filter { !members.contains($0) }, of: group)
                } }
            }
            return tencentOK([], messages: "")
        case .destroyGroup:
            let group = try TencentREST.groupOnly(body)
            try await answering {
                try await tenant.update { facade in try await facade.edit(EditScope(groups: [group])) { edit in
                    _ = try Self.tencentGroup(group, in: edit, refusing: [], code: 0)
                    try edit.deleteGroup(group)
                } }
            }
            return tencentOK([], messages: "")
        case .getGroupMemberInfo:
            let query = try TencentREST.memberInfo(body)
            let (total, items) = try await answering { () async throws -> (Int, [JSONValue]) in
                try await tenant.reading { facade in
                    // The group, then its page's members' records.
                    let (profile, page, listed) = try await facade.reading(EditScope(groups: [query.group])) { edit in
                        let profile = try Self.tencentGroup(query.group, in: edit, refusing: [], code: 0)
                        var page: [(member: UserID, role: String)] = []
                        var listed = 0
                        for member in try edit.members(of: query.group) {
                            let role = member == profile.owner ? "Owner" : profile.admins.contains(member) ? "Admin" : "Member"
                            if let roles = query.roles, !roles.contains(role) { continue }
                            listed += 1
                            guard listed > query.offset, page.count < query.limit else { continue }
                            page.append((member, role))
                        }
                        return (profile, page, listed)
                    }
                    let items = try await facade.reading(EditScope(users: page.map(\.member))) { edit in
                        try page.map { member, role -> JSONValue in
                            let state = try edit.user(member)?.state
                            var o: [(key: String, value: JSONValue)] = [
                                ("Member_Account", .string(member)), ("Role", .string(role)),
                                ("MsgFlag", .string(Self.messageFlag(of: member, state: state, group: query.group, profile: profile).rawValue)),
                            ]
                            if let card = state?.nameCards[query.group] { o.append(("NameCard", .string(card))) }
                            return .object(JSONObject(o))
                        }
                    }
                    return (listed, items)
                }
            }
            return tencentOK([("MemberNum", .int(Int64(total))), ("MemberList", .array(items))], messages: "")
        case .modifyGroupMemberInfo:
            let change = try TencentREST.memberChange(body)
            let now = Instant.now
            try await answering {
                let scope = EditScope(app: true, users: [change.member], groups: [change.group])
                try await tenant.update { facade in try await facade.edit(scope) { edit in
                    var profile = try Self.tencentGroup(change.group, in: edit, refusing: ["AVChatRoom"], code: 10007)
                    guard try edit.members(of: change.group).contains(change.member) else {
                        throw TencentREST.Failure(code: 10007, info: "/Member_Account: \(JSONWriter.quoted(change.member)) is not a member of the group")
                    }
                    if let admin = change.admin {
                        guard change.member != profile.owner else { throw TencentREST.Failure(code: 10004, info: "/Role: the owner's role cannot change") }
                        profile.admins.removeAll { $0 == change.member }
                        if admin { profile.admins.append(change.member) }
                    }
                    if let flag = change.flag {
                        profile.discarding.removeAll { $0 == change.member }
                        if flag == .discard { profile.discarding.append(change.member) }
                        let key = ConversationKey(.group, change.group)
                        try edit.updateUser(change.member, dialect: "tencent-tim") { state in
                            var settings = state.settings(for: key)
                            settings.remindType = flag.remindType
                            state.setSettings(settings, for: key)
                        }
                    }
                    if let card = change.nameCard {
                        let call: JSONValue = [
                            "call": "modifyGroupMemberInfoSetNameCard", "groupId": .string(change.group), "user": .string(change.member), "nameCard": .string(card),
                        ]
                        _ = try edit.apply([PushFacade.DialectCall(call, at: now, pointer: .root)], dialect: "tencent-tim", user: change.member)
                    }
                    try edit.setGroupProfile(profile, of: change.group)
                } }
            }
            return tencentOK([], messages: "")
        default:
            throw TencentREST.Failure(code: 60009, info: "no such command: \(command.rawValue)")
        }
    }

    /// A group's profile (made up for one the native API built), or 10010; a group of a type in
    /// `refusing` is refused with `code` (Tencent: AVChatRoom has no member list to manage).
    static func tencentGroup(_ group: String, in state: StateEdit, refusing types: [String], code: Int) throws -> GroupProfile {
        let profile: GroupProfile
        if let stored = try state.groupProfile(of: group) {
            profile = stored
        } else {
            let members = try state.members(of: group)
            guard !members.isEmpty else { throw TencentREST.Failure(code: 10010, info: "group \(JSONWriter.quoted(group)) does not exist or was destroyed") }
            profile = GroupProfile(owner: nil, name: group, maxUsers: max(TencentREST.defaultMaxMemberCount, members.count), createdAt: Instant(milliseconds: 0))
        }
        if case .string(let type)? = profile.vendorFields["Type"], types.contains(type) {
            throw TencentREST.Failure(code: code, info: "not supported for a \(type) group")
        }
        return profile
    }

    /// A member's `MsgFlag`: its remind type for the group's conversation (and `Discard`, kept in the profile).
    static func messageFlag(of member: UserID, state: UserState?, group: String, profile: GroupProfile) -> TencentREST.MessageFlag {
        switch state?.conversations[ConversationKey(.group, group)]?.remindType {
        case RemindType.none?: return profile.discarding.contains(member) ? .discard : .acceptNotNotify
        case RemindType.mentionOnly?: return .acceptNotNotifyExceptAt
        case RemindType.all?, nil: return .acceptAndNotify
        }
    }
}
