import Hummingbird
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeServer
import PushBridgeStore
import PushBridgeVendorREST

extension ServiceRoutes {
    /// Easemob / Agora Chat device binding and push without a message (Specification §14): the same devices
    /// `bindDeviceToken` makes, and pushes decided and queued in the outbox as any message's.
    func registerEasemobPush(on router: RecordingRouter<Context>) {
        router.put("/:org/:app/users/:username/push/binding") { request, context in
            try await easemob(request, context) { app in
                let user = try parameter("username", context)
                let binding = try EasemobREST.pushBinding(try await body(request, context))
                let now = Instant.now
                let bound = try await answering { () async throws -> PushBinding? in
                    try await app.tenant.update { facade in try await facade.edit(PushFacade.bindingScope(user: user, token: binding.token)) { edit in
                        guard try edit.user(user) != nil else { throw EasemobFailure.noUser(user) }
                        return try edit.bindPush(
                            user: user, deviceID: binding.deviceID, token: binding.token, notifier: binding.notifier, at: now, dialect: "agora-silent")
                    } }
                }
                logger.info("push binding", metadata: ["app": "\(app.binding.app)", "user": "\(user)", "bound": "\(bound != nil)"])
                return envelope(app, request, action: "put", entities: bound.map { [Self.bindingEntity($0)] } ?? [])
            }
        }
        router.get("/:org/:app/users/:username/push/binding") { request, context in
            try await easemob(request, context) { app in
                let user = try parameter("username", context)
                let bindings = try await answering { () async throws -> [PushBinding] in
                    try await app.tenant.reading { facade in
                        try await facade.reading(EditScope(users: [user], bindings: [user])) { edit in
                            guard try edit.user(user) != nil else { throw EasemobFailure.noUser(user) }
                            return try edit.pushBindings(of: user)
                        }
                    }
                }
                return envelope(app, request, action: "get", entities: bindings.map(Self.bindingEntity))
            }
        }
        router.post("/:org/:app/push/single") { request, context in
            try await easemob(request, context) { app in
                let messages = try EasemobREST.pushMessages(try await body(request, context), target: nil, newID: try messageIDs(request))
                return try await pushAnswer(messages, app, request, async: true)
            }
        }
        for (path, async) in [("/:org/:app/push/sync/:target", false), ("/:org/:app/push/async/:target", true)] {
            router.post(RouterPath(path)) { request, context in
                try await easemob(request, context) { app in
                    let messages = try EasemobREST.pushMessages(try await body(request, context), target: try parameter("target", context), newID: try messageIDs(request))
                    return try await pushAnswer(messages, app, request, async: async)
                }
            }
        }
        // Push tasks to the users of labels, or to every user: accepted at once with the task id,
        // run by the service's task runner (Ruling 186).
        router.post("/:org/:app/push/list/label") { request, context in
            try await easemob(request, context) { app in
                let now = Instant.now
                let task = try EasemobREST.pushTask(
                    try await body(request, context), toLabels: true, maximumLabels: app.binding.agoraAppID == nil ? 1 : 5, now: now)
                let id = try await createTask(task, app, now: now)
                var response = envelope(app, request, action: "post", data: .object(JSONObject([("taskId", .int(id))])))
                response.headers[.pushBridgeTask] = String(id)
                return response
            }
        }
        router.post("/:org/:app/push/task") { request, context in
            try await easemob(request, context) { app in
                let now = Instant.now
                let task = try EasemobREST.pushTask(try await body(request, context), toLabels: false, maximumLabels: 0, now: now)
                let id = try await createTask(task, app, now: now)
                var response = envelope(app, request, action: "post", data: .int(id))
                response.headers[.pushBridgeTask] = String(id)
                return response
            }
        }
    }

    /// Stores a push task (the service wakes the app's task runner); refusals in the vendor's shape.
    private func createTask(_ request: EasemobREST.PushTaskRequest, _ app: EasemobApp, now: Instant) async throws -> Int64 {
        var bytes = JSONWriter()
        bytes.write(request.stored)
        let task = PushTask(
            id: Self.newTaskID(now), family: VendorBinding.Vendor.easemob.rawValue, audience: TaskAudience(all: request.labels.map(app.labelKey)), request: bytes.bytes, createdAt: now,
            startAt: request.startAt ?? now)
        _ = try await answering {
            do {
                return try await createTask(task, labelNames: request.labels, in: app.tenant)
            } catch let refusal as PushFacade.LabelRefusal {
                throw Self.labelFailure(refusal)
            } catch let refusal as PushFacade.TaskRefusal {
                throw EasemobFailure(status: .forbidden, error: "LimitException", description: "limit request: \(refusal)")
            }
        }
        return task.id
    }

    /// Sends the pushes and answers each target: `pushStatus` (`ASYNC_SUCCESS` / `SUCCESS` when a
    /// push was queued, else `FAIL`) and `desc` (`no push binding`, `appUser not exists`, or the reason).
    func pushAnswer(_ messages: [VendorMessage], _ app: EasemobApp, _ request: Request, async: Bool) async throws -> Response {
        let result = try await send(messages, in: app.tenant, skippingUnknown: true)
        var outcomes: [String: PushFacade.SendOutcome] = [:]
        for (message, outcome) in result.messages { outcomes[message.targets[0]] = outcome }
        var items: [JSONValue] = []
        for message in messages {
            let target = message.targets[0]
            let status: String
            let desc: String
            if let outcome = outcomes[target], let decision = outcome.decisions.first {
                switch decision.fanOut {
                case .push: (status, desc) = (async ? "ASYNC_SUCCESS" : "SUCCESS", "success")
                case .suppressed(.noDevice): (status, desc) = ("FAIL", "no push binding")
                case .suppressed(let reason): (status, desc) = ("FAIL", "not pushed: \(reason.rawValue)")
                }
            } else {
                (status, desc) = ("FAIL", "appUser not exists")
            }
            var o: [(key: String, value: JSONValue)] = async ? [("id", .string(target))] : []
            o += [("pushStatus", .string(status))]
            if !async { o.append(("data", .object(JSONObject([("messageId", .string(outcomes[target]?.messageID ?? ""))])))) }
            o.append(("desc", .string(desc)))
            items.append(.object(JSONObject(o)))
        }
        var response = envelope(app, request, action: "post", data: .array(items))
        response.headers[.pushBridgeMessages] = result.header
        return response
    }

    static func bindingEntity(_ binding: PushBinding) -> JSONValue {
        .object(JSONObject([("device_id", .string(binding.deviceID)), ("device_token", .string(binding.token)), ("notifier_name", .string(binding.notifier))]))
    }
}
