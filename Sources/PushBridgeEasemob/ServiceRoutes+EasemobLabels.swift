import Hummingbird
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeServer
import PushBridgeStore

extension ServiceRoutes {
    /// Easemob / Agora Chat push labels (`/push/label`, campaign research §1.1): create, list, get and
    /// delete labels; add, list, check and remove a label's users. An app bound with Agora Chat's
    /// credentials finds label names ignoring case (Ruling 185).
    func registerEasemobLabels(on router: RecordingRouter<Context>) {
        router.post("/:org/:app/push/label") { request, context in
            try await easemob(request, context) { app in
                let (name, description) = try EasemobREST.newLabel(try await body(request, context))
                let label = PushLabel(key: app.labelKey(name), name: name, description: description, createdAt: .now)
                let stored = try await labelAnswering { try await app.tenant.update { try await $0.createLabel(label) } }
                return envelope(app, request, action: "post", data: Self.labelData(stored, count: false))
            }
        }
        router.get("/:org/:app/push/label") { request, context in
            try await easemob(request, context) { app in
                let query = request.uri.queryParameters
                let page = try EasemobREST.labelPage(limit: query.get("limit"), cursor: query.get("cursor"), of: "label")
                let labels = try await labelAnswering { try await app.tenant.reading { try await $0.labels(after: page.after, limit: page.limit + 1) } }
                let shown = labels.prefix(page.limit)
                let extra: [(key: String, value: JSONValue)] =
                    labels.count > page.limit ? [("cursor", .string(EasemobREST.labelCursor(after: shown.last!.key, of: "label")))] : []
                return envelope(app, request, action: "get", data: .array(shown.map { Self.labelData($0, count: true) }), extra: extra)
            }
        }
        router.get("/:org/:app/push/label/:labelname") { request, context in
            try await easemob(request, context) { app in
                let name = try labelName(context)
                guard let label = try await labelAnswering({ try await app.tenant.reading { try await $0.label(app.labelKey(name)) } }) else {
                    throw Self.labelFailure(.unknownLabel(name))
                }
                return envelope(app, request, action: "get", data: Self.labelData(label, count: true))
            }
        }
        router.delete("/:org/:app/push/label/:labelname") { request, context in
            try await easemob(request, context) { app in
                let name = try labelName(context)
                try await labelAnswering { try await app.tenant.update { try await $0.deleteLabel(app.labelKey(name), named: name) } }
                return envelope(app, request, action: "delete", data: "success")
            }
        }
        router.post("/:org/:app/push/label/:labelname/user") { request, context in
            try await easemob(request, context) { app in
                let name = try labelName(context)
                let users = try EasemobREST.labelUsers(try await body(request, context))
                let now = Instant.now
                let outcome = try await labelAnswering {
                    try await app.tenant.update { try await $0.addUsers(users, toLabel: app.labelKey(name), named: name, at: now) }
                }
                return envelope(app, request, action: "post", data: Self.usersData(outcome))
            }
        }
        router.delete("/:org/:app/push/label/:labelname/user") { request, context in
            try await easemob(request, context) { app in
                let name = try labelName(context)
                let users = try EasemobREST.labelUsers(try await body(request, context))
                let outcome = try await labelAnswering {
                    try await app.tenant.update { try await $0.removeUsers(users, fromLabel: app.labelKey(name), named: name) }
                }
                return envelope(app, request, action: "delete", data: Self.usersData(outcome))
            }
        }
        router.get("/:org/:app/push/label/:labelname/user") { request, context in
            try await easemob(request, context) { app in
                let name = try labelName(context)
                let query = request.uri.queryParameters
                let page = try EasemobREST.labelPage(limit: query.get("limit"), cursor: query.get("cursor"), of: "labeluser")
                let users = try await labelAnswering {
                    try await app.tenant.reading { try await $0.labelUsers(app.labelKey(name), named: name, after: page.after, limit: page.limit + 1) }
                }
                let shown = users.prefix(page.limit)
                let extra: [(key: String, value: JSONValue)] =
                    users.count > page.limit ? [("cursor", .string(EasemobREST.labelCursor(after: shown.last!.user, of: "labeluser")))] : []
                return envelope(app, request, action: "get", data: .array(shown.map(Self.userData)), extra: extra)
            }
        }
        // A user not in the label: the answer has no `data` (the vendor's "not returned").
        router.get("/:org/:app/push/label/:labelname/user/:username") { request, context in
            try await easemob(request, context) { app in
                let name = try labelName(context)
                let user = try parameter("username", context)
                let found = try await labelAnswering { try await app.tenant.reading { try await $0.labelUser(app.labelKey(name), named: name, user: user) } }
                return envelope(app, request, action: "get", data: found.map(Self.userData))
            }
        }
    }

    /// The `{labelname}` of the path, checked.
    private func labelName(_ context: Context) throws -> String {
        let name = try parameter("labelname", context)
        do {
            return try EasemobREST.labelName(name, at: .root)
        } catch let error as InputError {
            throw ServiceError(.badRequest, code: "invalid-value", pointer: "{labelname}", expected: error.expected, found: error.found)
        }
    }

    /// Runs a label call, answering a refusal in the vendor's shape.
    @discardableResult
    private func labelAnswering<T>(_ body: () async throws -> T) async throws -> T {
        try await answering {
            do {
                return try await body()
            } catch let refusal as PushFacade.LabelRefusal {
                throw Self.labelFailure(refusal)
            }
        }
    }

    /// A refused label call: an unknown label 400 `ResourceNotFoundException` and a limit 403
    /// `LimitException`, as the vendors document them; a name taken 400 `IllegalArgumentException` (Ruling 185).
    static func labelFailure(_ refusal: PushFacade.LabelRefusal) -> EasemobFailure {
        if refusal.isTooManyLabels { return EasemobFailure(status: .forbidden, error: "LimitException", description: "limit request: \(refusal)") }
        if refusal.isLabelExists { return EasemobFailure(status: .badRequest, error: "IllegalArgumentException", description: "\(refusal)") }
        return EasemobFailure(status: .badRequest, error: "ResourceNotFoundException", description: "\(refusal)")
    }

    static func labelData(_ label: PushLabel, count: Bool) -> JSONValue {
        var fields: [(key: String, value: JSONValue)] = [("name", .string(label.name)), ("description", .string(label.description))]
        if count { fields.append(("count", .int(Int64(label.count)))) }
        fields.append(("createdAt", .int(label.createdAt.milliseconds)))
        return .object(JSONObject(fields))
    }

    static func userData(_ user: LabelUser) -> JSONValue {
        .object(JSONObject([("username", .string(user.user)), ("created", .int(user.addedAt.milliseconds))]))
    }

    /// `{"success": [users], "fail": {user: reason}}`.
    static func usersData(_ outcome: PushFacade.LabelUsersOutcome) -> JSONValue {
        let failed: [(key: String, value: JSONValue)] = outcome.failed.map { refused in
            switch refused.failure {
            case .unknownUser: (refused.user, "user not exists")
            case .labelFull(let maximum): (refused.user, .string("the label has \(maximum) users, the most it may have"))
            }
        }
        return .object(JSONObject([("success", .array(outcome.succeeded.map(JSONValue.string))), ("fail", .object(JSONObject(failed)))]))
    }
}

extension EasemobApp {
    /// The key a label name is found by in this app (Agora Chat's names ignore case).
    func labelKey(_ name: String) -> String { EasemobREST.labelKey(name, ignoringCase: binding.agoraAppID != nil) }
}
