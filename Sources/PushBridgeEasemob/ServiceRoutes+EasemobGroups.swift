import Hummingbird
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeServer
import PushBridgeVendorREST

/// A group as an Easemob handler reads it: its profile (made up for a group the native API built,
/// which has none) and members in order.
struct EasemobGroup: Sendable {
    var id: String
    var profile: GroupProfile
    var members: [UserID]
    /// Whether the store has a profile for it (else one is written on the first change).
    var hasProfile: Bool

    /// The group, or the vendor's 404 (`grpID … does not exist!`).
    static func read(_ id: String, in state: StateEdit) throws -> EasemobGroup {
        let members = try state.members(of: id)
        if let profile = try state.groupProfile(of: id) { return EasemobGroup(id: id, profile: profile, members: members, hasProfile: true) }
        guard !members.isEmpty else { throw EasemobFailure.noGroup(id) }
        let made = GroupProfile(owner: nil, name: "", maxUsers: max(EasemobREST.defaultMaxUsers, members.count), createdAt: Instant(milliseconds: 0))
        return EasemobGroup(id: id, profile: made, members: members, hasProfile: false)
    }

    /// The groups of `ids` that still exist, in one snapshot (a list read before it may name one
    /// deleted since).
    static func read(_ ids: [String], in facade: PushFacade) async throws -> [EasemobGroup] {
        try await facade.reading(EditScope(groups: ids)) { edit in try ids.filter { try edit.groupExists($0) }.map { try read($0, in: edit) } }
    }

    /// `affiliations`: the owner first, then the other members in order.
    var affiliations: [JSONValue] {
        var out: [JSONValue] = []
        if let owner = profile.owner, members.contains(owner) { out.append(["owner": .string(owner)]) }
        for member in members where member != profile.owner { out.append(["member": .string(member)]) }
        return out
    }

    /// The group's entry in `GET /chatgroups/{id}`.
    var details: JSONValue {
        let vendor = profile.vendorFields
        return .object(
            JSONObject([
                ("id", .string(id)), ("name", .string(profile.name)), ("description", vendor["description"] ?? ""),
                ("membersonly", vendor["membersonly"] ?? false), ("allowinvites", vendor["allowinvites"] ?? false),
                ("maxusers", .int(Int64(profile.maxUsers))), ("owner", profile.owner.map(JSONValue.string) ?? ""),
                ("created", .int(profile.createdAt.milliseconds)), ("custom", vendor["custom"] ?? ""), ("mute", false),
                ("affiliations_count", .int(Int64(members.count))), ("disabled", false), ("public", vendor["public"] ?? false),
                ("affiliations", .array(affiliations)),
            ]))
    }
}

extension EasemobFailure {
    static func noGroup(_ id: String) -> EasemobFailure {
        EasemobFailure(status: .notFound, error: "resource_not_found", description: "grpID \(id) does not exist!")
    }
    static func noUser(_ user: String) -> EasemobFailure {
        EasemobFailure(status: .notFound, error: "resource_not_found", description: "username \(user) doesn't exist!")
    }
    static func forbidden(_ text: String) -> EasemobFailure {
        EasemobFailure(status: .forbidden, error: "forbidden_op", description: text)
    }
    static let tooManyMembers = EasemobFailure(status: .forbidden, error: "exceed_limit", description: "members size is greater than max user size !")
}

extension ServiceRoutes {
    /// Easemob / Agora Chat group management (Specification §14) at `/{org}/{app}/chatgroups…`: the same
    /// membership the native API and the SDK dialects see, with a profile beside it.
    func registerEasemobGroups(on router: RecordingRouter<Context>) {
        // `POST …/chatgroups/` (a trailing slash, as earlier backends send) is the same route.
        router.post("/:org/:app/chatgroups") { request, context in
            try await easemob(request, context) { app in
                let creation = try EasemobREST.groupCreation(try await body(request, context), publicRequired: app.binding.agoraAppID == nil)
                let now = Instant.now
                let candidates = CandidateIDs { EasemobREST.newGroupID() }
                let users = [creation.owner] + creation.members
                let id = try await answering { () async throws -> String in
                    try await app.tenant.update { facade in try await facade.edit(EditScope(users: users, groups: candidates.ids)) { edit in
                        for user in users where try edit.user(user) == nil { throw EasemobFailure.noUser(user) }
                        guard creation.members.count + 1 <= creation.maxUsers else { throw EasemobFailure.tooManyMembers }
                        let id = try candidates.first(freeIn: edit)
                        var profile = GroupProfile(
                            owner: creation.owner, name: creation.name, maxUsers: creation.maxUsers,
                            offlinePush: creation.maxUsers <= EasemobREST.largeGroupThreshold, createdAt: now, vendorFields: creation.fields)
                        profile.vendorFields["scale"] = nil
                        try edit.setGroupProfile(profile, of: id)
                        try edit.setMembers(users, of: id)
                        return id
                    } }
                }
                return envelope(app, request, action: "post", data: ["groupid": .string(id)])
            }
        }
        router.get("/:org/:app/chatgroups/:group") { request, context in
            try await easemob(request, context) { app in
                let ids = try easemobIDs(try parameter("group", context))
                let groups = try await answering { try await app.tenant.reading { facade in
                    try await facade.reading(EditScope(groups: ids)) { edit in try ids.map { try EasemobGroup.read($0, in: edit) } }
                } }
                return envelope(app, request, action: "get", data: .array(groups.map(\.details)), extra: [("count", .int(Int64(groups.count)))])
            }
        }
        router.put("/:org/:app/chatgroups/:group") { request, context in
            try await easemob(request, context) { app in
                let id = try parameter("group", context)
                let change = try EasemobREST.groupChange(try await body(request, context))
                try await answering {
                    try await app.tenant.update { facade in try await facade.edit(EditScope(groups: [id])) { edit in
                        var group = try EasemobGroup.read(id, in: edit)
                        if let owner = change.newOwner {
                            guard group.members.contains(owner) else { throw EasemobFailure.forbidden("user: \(owner) doesn't exist in group: \(id)") }
                            guard owner != group.profile.owner else { throw EasemobFailure.forbidden("new owner and old owner are the same") }
                            group.profile.owner = owner
                        }
                        if let name = change.name { group.profile.name = name }
                        if let maxUsers = change.maxUsers {
                            guard group.members.count <= maxUsers else { throw EasemobFailure.tooManyMembers }
                            group.profile.maxUsers = maxUsers
                            // Offline push, once off, stays off; raising the limit above 3,000 turns it off (Rulings).
                            if maxUsers > EasemobREST.largeGroupThreshold { group.profile.offlinePush = false }
                        }
                        for (key, value) in change.fields { group.profile.vendorFields[key] = value }
                        try edit.setGroupProfile(group.profile, of: id)
                    } }
                }
                return envelope(app, request, action: "put", data: .object(JSONObject(change.keys.map { ($0, JSONValue.bool(true)) })))
            }
        }
        router.delete("/:org/:app/chatgroups/:group") { request, context in
            try await easemob(request, context) { app in
                let id = try parameter("group", context)
                try await answering {
                    try await app.tenant.update { facade in try await facade.edit(EditScope(groups: [id])) { edit in
                        _ = try EasemobGroup.read(id, in: edit)
                        try edit.deleteGroup(id)
                    } }
                }
                return envelope(app, request, action: "delete", data: ["success": true, "groupid": .string(id)])
            }
        }
        // Every group of the app, in id order, `limit` at a time with Easemob's `cursor` (Ruling 152).
        router.get("/:org/:app/chatgroups") { request, context in
            try await easemob(request, context) { app in
                let query = request.uri.queryParameters
                let page = try EasemobREST.groupListPage(limit: query.get("limit"), cursor: query.get("cursor"))
                let (groups, more) = try await answering {
                    try await app.tenant.reading { facade -> ([EasemobGroup], Bool) in
                        let ids = try await facade.groups()
                        let slice = Array(ids.dropFirst(page.offset).prefix(page.limit))
                        return (try await EasemobGroup.read(slice, in: facade), page.offset + slice.count < ids.count)
                    }
                }
                let data: [JSONValue] = groups.map { group in
                    .object(
                        JSONObject([
                            ("owner", .string(group.profile.owner ?? "")), ("groupid", .string(group.id)), ("affiliations", .int(Int64(group.members.count))),
                            ("type", "group"), ("last_modified", .string(String(group.profile.createdAt.milliseconds))), ("groupname", .string(group.profile.name)),
                        ]))
                }
                var params: [(key: String, value: JSONValue)] = [("limit", [.string(String(page.limit))])]
                if let cursor = query.get("cursor") { params.append(("cursor", [.string(cursor)])) }
                var extra: [(key: String, value: JSONValue)] = [("params", .object(JSONObject(params))), ("count", .int(Int64(data.count)))]
                if more { extra.append(("cursor", .string(EasemobREST.groupListCursor(offset: page.offset + groups.count)))) }
                return envelope(app, request, action: "get", data: .array(data), extra: extra)
            }
        }
        // The groups a user is a member of (all of them, or a page with `pagesize` and `pagenum`).
        router.get("/:org/:app/users/:username/joined_chatgroups") { request, context in
            try await easemob(request, context) { app in
                let user = try parameter("username", context)
                let query = request.uri.queryParameters
                let paged = query.get("pagesize") != nil || query.get("pagenum") != nil
                let page = try EasemobREST.memberPage(pagenum: query.get("pagenum"), pagesize: query.get("pagesize"))
                let groups = try await answering {
                    try await app.tenant.reading { facade -> [EasemobGroup]? in
                        guard try await facade.reading(EditScope(users: [user]), { try $0.user(user)?.isConfigured == true }) else { return nil }
                        let ids = try await facade.groups(containing: user)
                        let slice = paged ? Array(ids.dropFirst((page.number - 1) * page.size).prefix(page.size)) : ids
                        return try await EasemobGroup.read(slice, in: facade)
                    }
                }
                guard let groups else { throw EasemobFailure.noUser(user) }
                let data: [JSONValue] = groups.map { .object(JSONObject([("groupid", .string($0.id)), ("groupname", .string($0.profile.name))])) }
                var extra: [(key: String, value: JSONValue)] = []
                if paged { extra.append(("params", ["pagesize": [.string(String(page.size))], "pagenum": [.string(String(page.number))]])) }
                extra.append(("count", .int(Int64(data.count))))
                return envelope(app, request, action: "get", data: .array(data), extra: extra)
            }
        }
        router.get("/:org/:app/chatgroups/:group/users") { request, context in
            try await easemob(request, context) { app in
                let id = try parameter("group", context)
                let query = request.uri.queryParameters
                let page = try EasemobREST.memberPage(pagenum: query.get("pagenum"), pagesize: query.get("pagesize"))
                let group = try await answering { try await app.tenant.reading { try await $0.reading(EditScope(groups: [id])) { try EasemobGroup.read(id, in: $0) } } }
                let all = group.affiliations
                let start = min(all.count, (page.number - 1) * page.size)
                let slice = Array(all[start..<min(all.count, start + page.size)])
                return envelope(
                    app, request, action: "get", data: .array(slice),
                    extra: [("params", ["pagesize": [.string(String(page.size))], "pagenum": [.string(String(page.number))]]), ("count", .int(Int64(slice.count)))])
            }
        }
        router.post("/:org/:app/chatgroups/:group/users/:username") { request, context in
            try await easemob(request, context) { app in
                let id = try parameter("group", context)
                let user = try parameter("username", context)
                try await answering {
                    try await app.tenant.update { facade in try await facade.edit(EditScope(users: [user], groups: [id])) { edit in
                        let group = try EasemobGroup.read(id, in: edit)
                        guard try edit.user(user) != nil else { throw EasemobFailure.noUser(user) }
                        guard !group.members.contains(user) else { throw EasemobFailure.forbidden("user \(user) already in group \(id)") }
                        guard !group.profile.blocked.contains(user) else { throw EasemobFailure.forbidden("user \(user) is on the block list of group \(id)") }
                        guard group.members.count < group.profile.maxUsers else { throw EasemobFailure.tooManyMembers }
                        try edit.addMembers([user], to: id)
                    } }
                }
                return envelope(app, request, action: "post", data: ["result": true, "groupid": .string(id), "action": "add_member", "user": .string(user)])
            }
        }
        router.post("/:org/:app/chatgroups/:group/users") { request, context in
            try await easemob(request, context) { app in
                let id = try parameter("group", context)
                let users = try EasemobREST.groupBatch(try await body(request, context))
                let added = try await answering { () async throws -> [String] in
                    try await app.tenant.update { facade in try await facade.edit(EditScope(users: users, groups: [id])) { edit in
                        let group = try EasemobGroup.read(id, in: edit)
                        for user in users where try edit.user(user) == nil { throw EasemobFailure.noUser(user) }
                        let new = users.filter { !group.members.contains($0) && !group.profile.blocked.contains($0) }
                        guard !new.isEmpty else { throw EasemobFailure.forbidden("users \(users) already in group \(id) or on its block list") }
                        guard group.members.count + new.count <= group.profile.maxUsers else { throw EasemobFailure.tooManyMembers }
                        try edit.addMembers(new, to: id)
                        return new
                    } }
                }
                return envelope(app, request, action: "post", data: ["newmembers": .array(added.map(JSONValue.string)), "groupid": .string(id), "action": "add_member"])
            }
        }
        router.delete("/:org/:app/chatgroups/:group/users/:username") { request, context in
            try await easemob(request, context) { app in
                let id = try parameter("group", context)
                let users = try EasemobREST.pathUsers(try parameter("username", context))
                let results = try await answering { () async throws -> [(String, String?)] in
                    try await app.tenant.update { facade in try await facade.edit(EditScope(groups: [id])) { edit in
                        let group = try EasemobGroup.read(id, in: edit)
                        var results: [(String, String?)] = []
                        var members = group.members
                        for user in users {
                            if user == group.profile.owner {
                                results.append((user, "forbidden operation on group owner!"))
                            } else if let i = members.firstIndex(of: user) {
                                members.remove(at: i)
                                results.append((user, nil))
                            } else {
                                results.append((user, "users [\(user)] are not members of this group!"))
                            }
                        }
                        // One user: the vendor refuses the request; several: each has its result.
                        if users.count == 1, let reason = results[0].1 { throw EasemobFailure.forbidden(reason) }
                        try edit.setMembers(members, of: id)
                        return results
                    } }
                }
                return envelope(app, request, action: "delete", data: Self.userResults(results, group: id, action: "remove_member", single: users.count == 1))
            }
        }
        registerEasemobBlocks(on: router)
    }

    /// The group block list: blocked users are taken out of the group, receive no group message
    /// (so get no push) and cannot be added back until unblocked.
    func registerEasemobBlocks(on router: RecordingRouter<Context>) {
        router.get("/:org/:app/chatgroups/:group/blocks/users") { request, context in
            try await easemob(request, context) { app in
                let id = try parameter("group", context)
                let group = try await answering { try await app.tenant.reading { try await $0.reading(EditScope(groups: [id])) { try EasemobGroup.read(id, in: $0) } } }
                return envelope(
                    app, request, action: "get", data: .array(group.profile.blocked.map(JSONValue.string)), extra: [("count", .int(Int64(group.profile.blocked.count)))])
            }
        }
        for batch in [false, true] {
            let path = batch ? "/:org/:app/chatgroups/:group/blocks/users" : "/:org/:app/chatgroups/:group/blocks/users/:username"
            router.post(RouterPath(path)) { request, context in
                try await easemob(request, context) { app in
                    let id = try parameter("group", context)
                    let users = batch ? try EasemobREST.groupBatch(try await body(request, context)) : try EasemobREST.pathUsers(try parameter("username", context))
                    let results = try await blockChange(app, group: id, users: users, blocking: true)
                    return envelope(app, request, action: "post", data: Self.userResults(results, group: id, action: "add_blocks", single: !batch && users.count == 1))
                }
            }
        }
        router.delete("/:org/:app/chatgroups/:group/blocks/users/:username") { request, context in
            try await easemob(request, context) { app in
                let id = try parameter("group", context)
                let users = try EasemobREST.pathUsers(try parameter("username", context))
                let results = try await blockChange(app, group: id, users: users, blocking: false)
                return envelope(app, request, action: "delete", data: Self.userResults(results, group: id, action: "remove_blocks", single: users.count == 1))
            }
        }
    }

    /// Blocks (taking each out of the group) or unblocks users; per-user results (a reason when refused).
    func blockChange(_ app: EasemobApp, group id: String, users: [String], blocking: Bool) async throws -> [(String, String?)] {
        try await answering {
            try await app.tenant.update { facade in try await facade.edit(EditScope(users: users, groups: [id])) { edit in
                var group = try EasemobGroup.read(id, in: edit)
                var results: [(String, String?)] = []
                for user in users {
                    if blocking {
                        if user == group.profile.owner {
                            results.append((user, "forbidden operation on group owner!"))
                        } else if try edit.user(user) == nil {
                            results.append((user, "username \(user) doesn't exist!"))
                        } else {
                            if !group.profile.blocked.contains(user) { group.profile.blocked.append(user) }
                            group.members.removeAll { $0 == user }
                            results.append((user, nil))
                        }
                    } else if let i = group.profile.blocked.firstIndex(of: user) {
                        group.profile.blocked.remove(at: i)
                        results.append((user, nil))
                    } else {
                        results.append((user, "user \(user) is not on the block list of group \(id)"))
                    }
                }
                if users.count == 1, let reason = results[0].1 { throw EasemobFailure.forbidden(reason) }
                try edit.setGroupProfile(group.profile, of: id)
                try edit.setMembers(group.members, of: id)
                return results
            } }
        }
    }

    /// Per-user results of a removal or a block-list change: `{result, action, reason?, user, groupid}`,
    /// one object for a single user, else an array.
    static func userResults(_ results: [(String, String?)], group: String, action: String, single: Bool) -> JSONValue {
        let items: [JSONValue] = results.map { user, reason in
            var o: [(key: String, value: JSONValue)] = [("result", .bool(reason == nil)), ("action", .string(action))]
            if let reason { o.append(("reason", .string(reason))) }
            o += [("user", .string(user)), ("groupid", .string(group))]
            return .object(JSONObject(o))
        }
        return single ? items[0] : .array(items)
    }

    /// `{group_id}` of details: 1–100 comma-separated ids.
    func easemobIDs(_ segment: String) throws -> [String] {
        let ids = segment.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard ids.count <= 100, ids.allSatisfy({ !$0.isEmpty }) else {
            throw EasemobFailure(status: .badRequest, error: "illegal_argument", description: "{group_id}: expected 1–100 comma-separated group ids, found \(JSONWriter.quoted(segment))")
        }
        return ids
    }
}
