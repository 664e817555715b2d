import Hummingbird
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeServer
import PushBridgeStore
import PushBridgeVendorREST

extension ServiceRoutes {
    /// Tencent's daily push limit (`im_push`, `timpush/push`: 100 a day, 90047).
    static let tencentTasksPerDay = (tasks: 100, seconds: Int64(86_400))

    /// `all_member_push` and `timpush`: tags, pushes to every user or to tags (push tasks), pushes to
    /// listed accounts (`newID`: the ids `PushBridge-Message-Id` gives them).
    func tencentCampaign(_ body: JSONValue, command: TencentREST.Command, binding: VendorBinding, in tenant: AppTenant, newID: (() -> String)?) async throws -> Response {
        switch command {
        case .addTags, .removeTags:
            let changes = try TencentREST.userTags(body, command: command)
            let now = Instant.now
            try await tagAnswering {
                try await tenant.update { facade in
                    if command == .addTags { try await facade.addTags(changes, at: now) } else { try await facade.removeTags(changes.map { ($0.user, $0.tags) }) }
                }
            }
            return tencentOK([], messages: "")
        case .removeAllTags:
            let accounts = try TencentREST.tagAccounts(body, command: command)
            try await tagAnswering { try await tenant.update { try await $0.removeTags(accounts.map { ($0, nil) }) } }
            return tencentOK([], messages: "")
        case .getTags:
            let accounts = try TencentREST.tagAccounts(body, command: command)
            let tags = try await tagAnswering { try await tenant.reading { try await $0.tags(of: accounts) } }
            let items: [JSONValue] = zip(accounts, tags).map { user, tags in
                .object(JSONObject([("To_Account", .string(user)), ("Tags", .array(tags.map(JSONValue.string)))]))
            }
            return tencentOK([("UserTags", .array(items))], messages: "")
        case .setAttributeNames:
            let names = try TencentREST.attributeNames(body)
            try await attributeAnswering { try await tenant.update { try await $0.nameAttributes(names) } }
            return tencentOK([], messages: "")
        case .getAttributeNames:
            try TencentREST.emptyBody(body, command: command)
            let names = try await answering { try await tenant.reading { try await $0.attributeNames() } }
            return tencentOK([("AttrNames", .object(JSONObject(names.map { (String($0.slot), .string($0.name)) })))], messages: "")
        case .getAttributes:
            let accounts = try TencentREST.tagAccounts(body, command: command)
            let values = try await attributeAnswering { try await tenant.reading { try await $0.attributes(of: accounts) } }
            let items: [JSONValue] = zip(accounts, values).map { user, values in
                .object(JSONObject([("To_Account", .string(user)), ("Attrs", .object(JSONObject(values.map { ($0.name, .string($0.value)) })))]))
            }
            return tencentOK([("UserAttrs", .array(items))], messages: "")
        case .setAttributes, .removeAttributes:
            let changes = try TencentREST.userAttributes(body, command: command)
            try await attributeAnswering {
                try await tenant.update { facade in
                    if command == .setAttributes {
                        try await facade.setAttributes(changes)
                    } else {
                        try await facade.removeAttributes(changes.map { ($0.user, $0.values.map(\.name)) })
                    }
                }
            }
            return tencentOK([], messages: "")
        case .timPushBatch:
            // Sent at once, like `batchsendmsg`: unknown accounts are listed, the others pushed.
            let (messages, random) = try TencentREST.batchPush(body, newID: newID)
            let result = try await send(messages, in: tenant, skippingUnknown: true)
            var fields: [(key: String, value: JSONValue)] = [("TaskId", .string("batch_\(String(random, radix: 16))_\(String(Instant.now.milliseconds / 1000, radix: 16))"))]
            if !result.unknown.isEmpty {
                fields.append(
                    ("ErrorList", .array(result.unknown.map { .object(JSONObject([("To_Account", .string($0)), ("ErrorCode", 70107), ("ErrorInfo", "the account does not exist")])) })))
            }
            return tencentOK(fields, messages: result.header)
        default:
            return try await tencentTask(body, command: command, binding: binding, in: tenant)
        }
    }

    /// `im_push` / `timpush/push`: a push task, accepted at once with its `TaskId`. The same
    /// `MsgRandom` again within a second is the same task.
    private func tencentTask(_ body: JSONValue, command: TencentREST.Command, binding: VendorBinding, in tenant: AppTenant) async throws -> Response {
        let request = try TencentREST.campaign(body, command: command, administrator: binding.account)
        let conditioned = request.audience.attributes + request.audience.anyAttributes
        if !conditioned.isEmpty {
            let named = Set(try await answering { try await tenant.reading { try await $0.attributeNames() } }.map(\.name))
            if let unknown = conditioned.first(where: { !named.contains($0.name) }) {
                throw TencentREST.Failure(code: 90033, info: "Condition names the attribute \(JSONWriter.quoted(unknown.name)), which the app has not named (im_set_attr_name)")
            }
        }
        let now = Instant.now
        let recent = try await answering { try await tenant.reading { try await $0.tasks(.createdSince(now.adding(seconds: -1))) } }
        let id: Int64
        if let same = recent.first(where: { $0.family == VendorBinding.Vendor.tencent.rawValue && TencentREST.storedRandom($0.request) == request.random }) {
            id = same.id
        } else {
            var bytes = JSONWriter()
            bytes.write(request.stored)
            let task = PushTask(
                id: Self.newTaskID(now), family: VendorBinding.Vendor.tencent.rawValue, audience: request.audience, request: bytes.bytes, createdAt: now, startAt: now)
            id = try await answering {
                do {
                    return try await createTask(task, labelNames: nil, in: tenant, limit: Self.tencentTasksPerDay)
                } catch let refusal as PushFacade.TaskRefusal {
                    throw TencentREST.Failure(code: 90047, info: "\(refusal) (Tencent's daily limit)")
                }
            }.id
        }
        var response = tencentOK([("TaskId", .string(String(id)))], messages: "")
        response.headers[.pushBridgeTask] = String(id)
        return response
    }

    /// Runs an attribute call, answering the facade's refusal with Tencent's code: 70107 for an
    /// unknown account, 90033 for an attribute name.
    private func attributeAnswering<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await answering {
            do {
                return try await body()
            } catch let refusal as PushFacade.AttributeRefusal {
                throw TencentREST.Failure(code: refusal.isUnknownUser ? 70107 : 90033, info: "\(refusal)")
            }
        }
    }

    /// Runs a tag call, answering the facade's refusal with Tencent's code: 70107 for an unknown
    /// account, 90032 past a user's 100 tags.
    private func tagAnswering<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await answering {
            do {
                return try await body()
            } catch let refusal as PushFacade.TagRefusal {
                throw TencentREST.Failure(code: refusal.isUnknownUser ? 70107 : 90032, info: "\(refusal)")
            }
        }
    }
}
