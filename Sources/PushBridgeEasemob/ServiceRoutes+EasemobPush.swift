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
        // Push tasks to a label or to every user: Easemob's answer when the push service is not open.
        for path in ["/:org/:app/push/list/label", "/:org/:app/push/task"] {
            router.post(RouterPath(path)) { request, context in
                try await easemob(request, context) { _ in
                    throw EasemobFailure(
                        status: .forbidden, error: "ServiceNotOpenException",
                        description: "push service not open: PushBridge pushes to named users (/push/single, /push/sync/{target}, /push/async/{target}); label and whole-app tasks are not served")
                }
            }
        }
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
