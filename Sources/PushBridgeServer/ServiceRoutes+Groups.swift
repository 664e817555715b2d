import PushBridgeFacade
import Hummingbird
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON

extension ServiceRoutes {
    /// A group's members: read, replace the whole list, add, remove one.
    func registerGroups(on router: RecordingRouter<Context>) {
        router.get("/v1/apps/:app/groups/:group/members") { request, context in
            let tenant = try await tenant(request, context)
            let group = try parameter("group", context)
            let members = try await answering { try await tenant.reading { try await $0.reading(EditScope(groups: [group])) { try $0.members(of: group) } } }
            return json(Self.membersBody(group, members))
        }
        router.put("/v1/apps/:app/groups/:group/members") { request, context in
            let tenant = try await tenant(request, context)
            let group = try parameter("group", context)
            let members = try memberList(try await body(request, context))
            try await answering { try await tenant.update { facade in try await Self.listed { try await facade.setMembers(members, of: group) } } }
            return json(Self.membersBody(group, members))
        }
        router.post("/v1/apps/:app/groups/:group/members") { request, context in
            let tenant = try await tenant(request, context)
            let group = try parameter("group", context)
            let added = try memberList(try await body(request, context))
            let members = try await answering { try await tenant.update { facade in try await Self.listed { try await facade.addMembers(added, to: group) } } }
            return json(Self.membersBody(group, members))
        }
        router.delete("/v1/apps/:app/groups/:group/members/:user") { request, context in
            let tenant = try await tenant(request, context)
            let group = try parameter("group", context)
            let user = try parameter("user", context)
            let members = try await answering(notFoundAt: ["/user"]) { try await tenant.update { try await $0.removeMember(user, from: group) } }
            return json(Self.membersBody(group, members))
        }
    }

    /// Runs a member change whose errors point into the list: `/3` becomes `/members/3`.
    static func listed<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as InputError where error.pointer != .root {
            throw error.under(JSONPointer.root / "members")
        }
    }

    /// `{"members": [user, …]}`.
    func memberList(_ body: JSONValue) throws -> [UserID] {
        try checking {
            let reader = try FieldReader(body, at: .root, what: "{\"members\": [user id, …]}")
            try reader.allowOnly(["members"], context: "a member list")
            return try reader.stringArray("members", expected: "the members as an array of user id strings")
        }
    }

    static func membersBody(_ group: String, _ members: [UserID]) -> JSONValue {
        .object(JSONObject([("group", .string(group)), ("members", .array(members.map(JSONValue.string)))]))
    }
}
