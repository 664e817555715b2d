import Hummingbird
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

extension ServiceRoutes {
    /// Calls, state, presence, devices and removal of one user.
    func registerUsers(on router: RecordingRouter<Context>) {
        // A user's dialect calls, in one transaction: all applied, or (one rejected) none.
        router.post("/v1/apps/:app/users/:user/calls") { request, context in
            let tenant = try await tenant(request, context)
            let user = try parameter("user", context)
            let dialect = try dialect(request, in: tenant)
            let body = try await body(request, context)
            let now = Instant.now
            let results = try await answering { () async throws -> [(JSONValue, JSONValue?)] in
                let calls = try Scenario.calls(from: body, at: .root, now: now).map { PushFacade.DialectCall($0.call, at: $0.at, pointer: $0.pointer) }
                let results = try await tenant.update { try await $0.apply(calls, dialect: dialect, user: user) }
                return zip(calls, results).map { ($0.call["call"] ?? .null, $1) }
            }
            var w = JSONWriter(capacity: 64 * results.count + 16)
            w.raw("{\"results\":[")
            for (i, (call, result)) in results.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"call\":")
                w.write(call)
                if let result {
                    w.raw(",\"result\":")
                    w.write(result)
                }
                w.raw("}")
            }
            w.raw("]}")
            return json(w.bytes)
        }
        router.get("/v1/apps/:app/users/:user") { request, context in
            let tenant = try await tenant(request, context)
            let user = try parameter("user", context)
            guard let record = try await answering({ try await tenant.reading { try await $0.reading(EditScope(users: [user])) { try $0.user(user) } } }) else {
                throw ServiceError(.notFound, code: "unknown-reference", pointer: "", expected: "a user the app knows", found: JSONWriter.quoted(user))
            }
            return json(Self.userBody(record))
        }
        // Presence as the server learns it: {"presence": "online" | "offline" | "background", "backgroundSince"?: ISO 8601}.
        router.put("/v1/apps/:app/users/:user/presence") { request, context in
            let tenant = try await tenant(request, context)
            let user = try parameter("user", context)
            let dialect = try dialect(request, in: tenant)
            let body = try await body(request, context)
            let presence = try checking { try Self.presence(from: body) }
            let record = try await answering(notFoundAt: ["/user"]) { () async throws -> UserRecord in
                try await tenant.update { try await $0.setPresence(presence, of: user, dialect: dialect) }
            }
            return json(Self.userBody(record))
        }
        router.delete("/v1/apps/:app/users/:user/devices/:token") { request, context in
            let tenant = try await tenant(request, context)
            let user = try parameter("user", context)
            let token = try parameter("token", context).lowercased()
            try await answering(notFoundAt: ["/token"]) { _ = try await tenant.update { try await $0.removeDevice(token: token, ownedBy: user) } }
            return json(.object(JSONObject([("removed", .string(token)), ("user", .string(user))])))
        }
        router.delete("/v1/apps/:app/users/:user") { request, context in
            let tenant = try await tenant(request, context)
            let user = try parameter("user", context)
            try await answering(notFoundAt: ["/user"]) { try await tenant.update { try await $0.removeUser(user) } }
            return json(.object(JSONObject([("removed", .string(user))])))
        }
    }

    /// The canonical state and whether a dialect call has configured the user.
    static func userBody(_ record: UserRecord) -> JSONValue {
        guard case .object(let state) = record.state.jsonValue else { return .null }
        return .object(JSONObject(state.entries + [("configured", .bool(record.isConfigured))]))
    }

    /// `{"presence": "online" | "offline" | "background", "backgroundSince"?: ISO 8601}`: the keys of a
    /// scenario's receiver; `backgroundSince` goes with background only.
    static func presence(from body: JSONValue) throws -> Presence {
        let reader = try FieldReader(body, at: .root, what: "{\"presence\": \"online\" | \"offline\" | \"background\", \"backgroundSince\"?: ISO 8601}")
        try reader.allowOnly(["presence", "backgroundSince"], context: "a presence")
        guard reader.has("presence") else {
            throw InputError(.missingKey, at: JSONPointer.root / "presence", expected: "one of \"online\", \"background\", \"offline\"")
        }
        return try Scenario.readPresence(reader)
    }
}
