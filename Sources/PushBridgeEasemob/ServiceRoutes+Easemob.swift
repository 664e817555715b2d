import Crypto
import Foundation
import Hummingbird
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeServer
import PushBridgeStore
import PushBridgeVendorREST

/// Values derived once per key (a few apps' UUIDs).
final class Memo: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: String] = [:]
    func value(for key: String, _ make: (String) -> String) -> String {
        if let value = lock.withLock({ values[key] }) { return value }
        let value = make(key)
        lock.withLock { values[key] = value }
        return value
    }
}

/// One Easemob request's app: its binding, tenant and path names.
struct EasemobApp: Sendable {
    let binding: VendorBinding
    let tenant: AppTenant
    let org: String
    let name: String

    /// The app's `application` UUID: derived from the PushBridge app id, stable across restarts.
    var application: String { Self.applications.value(for: binding.app) { Self.uuid(of: $0) } }

    /// The UUIDs already derived, by app id.
    static let applications = Memo()

    static func uuid(of app: String) -> String {
        let hash = Array(SHA256.hash(data: Array(app.utf8)).prefix(16))
        var bytes = hash
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        let h = Array(hex)
        return String(h[0..<8]) + "-" + String(h[8..<12]) + "-" + String(h[12..<16]) + "-" + String(h[16..<20]) + "-" + String(h[20..<32])
    }
}

extension ServiceRoutes {
    /// Easemob / Agora Chat server REST (Specification §12) at the vendor's own paths, `/{org}/{app}/…`.
    func registerEasemob(on router: RecordingRouter<Context>) {
        router.post("/:org/:app/token") { request, context in
            try await easemob(request, context, authenticated: false) { app in
                let body = try await body(request, context)
                let now = Instant.now
                if app.binding.agoraAppID != nil {
                    // Agora Chat: an app token (AccessToken2) exchanged for one of PushBridge's, lasting as long.
                    try Self.agoraTokenRequest(body)
                    guard let presented = request.bearerKey else { throw EasemobFailure.unauthorized }
                    let expiresAt = try verifyAgoraToken(presented, binding: app.binding, now: now)
                    let token = AppToken.issue(signingKey: app.binding.signingKey, expiresAt: expiresAt)
                    logger.info("agora app token exchanged", metadata: ["app": "\(app.binding.app)"])
                    return json(
                        .object(
                            JSONObject([
                                ("access_token", .string(token)), ("expires_in", .int(max(0, (expiresAt.milliseconds - now.milliseconds) / 1000))),
                                ("expire_timestamp", .int(expiresAt.milliseconds)),
                            ])))
                }
                let (seconds, _) = try Self.tokenRequest(body, binding: app.binding)
                let token = AppToken.issue(signingKey: app.binding.signingKey, expiresAt: now.adding(seconds: seconds))
                logger.info("app token issued", metadata: ["app": "\(app.binding.app)", "seconds": "\(seconds)"])
                return json(.object(JSONObject([("access_token", .string(token)), ("expires_in", .int(seconds)), ("application", .string(app.application))])))
            }
        }
        // Registration: the user gets the Easemob defaults; a nickname is updatePushDisplayName.
        router.post("/:org/:app/users") { request, context in
            try await easemob(request, context) { app in
                let registrations = try EasemobREST.registrations(try await body(request, context))
                let now = Instant.now
                let calls = registrations.map { $0.calls.map { PushFacade.DialectCall($0, at: now, pointer: .root) } }
                let scope = EditScope(app: true, users: zip(registrations, calls).flatMap { PushFacade.scope(of: $1, user: $0.username).users })
                try await answering {
                    try await app.tenant.update { facade in try await facade.edit(scope) { edit in
                        for (registration, calls) in zip(registrations, calls) {
                            guard try edit.register(registration.username, dialect: "easemob-legacy") else {
                                // The whole request changes nothing.
                                throw ServiceError(.badRequest, code: "duplicate-unique-property", pointer: "/username",
                                    expected: "a username not registered yet (Entity user requires that property named username be unique)",
                                    found: JSONWriter.quoted(registration.username))
                            }
                            if !calls.isEmpty { _ = try edit.apply(calls, dialect: "easemob-legacy", user: registration.username) }
                        }
                    } }
                }
                var entities: [JSONValue] = []
                for registration in registrations {
                    let options = try await query(app, user: registration.username, ["call": "getPushOptionsFromServer"], dialect: "easemob-legacy")
                    entities.append(EasemobREST.userEntity(registration.username, options: options))
                }
                return envelope(app, request, action: "post", entities: entities)
            }
        }
        router.get("/:org/:app/users/:username") { request, context in
            try await easemob(request, context) { app in
                let user = try parameter("username", context)
                let options = try await query(app, user: user, ["call": "getPushOptionsFromServer"], dialect: "easemob-legacy")
                return envelope(app, request, action: "get", entities: [EasemobREST.userEntity(user, options: options)])
            }
        }
        router.delete("/:org/:app/users/:username") { request, context in
            try await easemob(request, context) { app in
                let user = try parameter("username", context)
                _ = try await query(app, user: user, ["call": "getPushOptionsFromServer"], dialect: "easemob-legacy")
                try await answering(notFoundAt: ["/user"]) { try await app.tenant.update { try await $0.removeUser(user) } }
                return envelope(app, request, action: "delete", entities: [.object(JSONObject([("type", "user"), ("username", .string(user)), ("activated", true)]))])
            }
        }
        router.put("/:org/:app/users/:username") { request, context in
            try await easemob(request, context) { app in
                let user = try parameter("username", context)
                let calls = Self.easemobCalls(try EasemobREST.userCalls(try await body(request, context)))
                let results = try await answering { try await app.tenant.update { try await $0.apply(calls, dialect: "easemob-legacy", user: user) } }
                return envelope(app, request, action: "put", entities: [EasemobREST.userEntity(user, options: results.last.flatMap { $0 } ?? .null)])
            }
        }
        router.put("/:org/:app/users/:username/notification/language") { request, context in
            try await easemob(request, context) { app in
                let user = try parameter("username", context)
                let calls = Self.easemobCalls(try EasemobREST.languageCalls(try await body(request, context)))
                let results = try await answering { try await app.tenant.update { try await $0.apply(calls, dialect: "agora-silent", user: user) } }
                return envelope(app, request, action: "put", data: EasemobREST.languageData(results.last.flatMap { $0 } ?? .null))
            }
        }
        router.get("/:org/:app/users/:username/notification/language") { request, context in
            try await easemob(request, context) { app in
                let result = try await query(app, user: try parameter("username", context), ["call": "getPreferredNotificationLanguage"])
                return envelope(app, request, action: "get", data: EasemobREST.languageData(result))
            }
        }
        router.put("/:org/:app/users/:username/notification/:chattype/:key") { request, context in
            try await easemob(request, context) { app in
                let user = try parameter("username", context)
                let target = try EasemobREST.notificationTarget(
                    chattype: try parameter("chattype", context), key: try parameter("key", context), username: user)
                let calls = Self.easemobCalls(try EasemobREST.notificationCalls(try await body(request, context), target: target))
                let results = try await answering { try await app.tenant.update { try await $0.apply(calls, dialect: "agora-silent", user: user) } }
                return envelope(app, request, action: "put", data: EasemobREST.notificationData(results.last.flatMap { $0 } ?? .null, target: target))
            }
        }
        router.get("/:org/:app/users/:username/notification/:chattype/:key") { request, context in
            try await easemob(request, context) { app in
                let user = try parameter("username", context)
                let target = try EasemobREST.notificationTarget(
                    chattype: try parameter("chattype", context), key: try parameter("key", context), username: user)
                let result = try await query(app, user: user, EasemobREST.notificationQuery(target))
                return envelope(app, request, action: "get", data: EasemobREST.notificationData(result, target: target))
            }
        }
        router.post("/:org/:app/notification/template") { request, context in
            try await easemob(request, context) { app in
                let template = try EasemobREST.template(try await body(request, context))
                let now = Instant.now
                try await answering {
                    try await app.tenant.update { facade in try await facade.edit(EditScope(app: true)) { edit in
                        var config = try edit.app()
                        config.templates.removeAll { $0.name == template.name }
                        config.templates.append(template)
                        try edit.configure(config)
                    } }
                }
                return envelope(app, request, action: "post", data: Self.withTimes(EasemobREST.templateData(template), now))
            }
        }
        router.get("/:org/:app/notification/template/:name") { request, context in
            try await easemob(request, context) { app in
                let name = try parameter("name", context)
                let config = try await answering { try await app.tenant.reading { try await $0.reading(EditScope(app: true)) { try $0.app() } } }
                guard let template = config.templates.first(where: { $0.name == name }) else { throw Self.noTemplate(name) }
                return envelope(app, request, action: "get", data: EasemobREST.templateData(template))
            }
        }
        router.delete("/:org/:app/notification/template/:name") { request, context in
            try await easemob(request, context) { app in
                let name = try parameter("name", context)
                let removed = try await answering { () async throws -> PushTemplate? in
                    try await app.tenant.update { facade in try await facade.edit(EditScope(app: true)) { edit in
                        var config = try edit.app()
                        guard let index = config.templates.firstIndex(where: { $0.name == name }) else { return nil }
                        let template = config.templates.remove(at: index)
                        try edit.configure(config)
                        return template
                    } }
                }
                guard let removed else { throw Self.noTemplate(name) }
                return envelope(app, request, action: "delete", data: EasemobREST.templateData(removed))
            }
        }
        registerEasemobGroups(on: router)
        registerEasemobPush(on: router)
        registerEasemobLabels(on: router)
        router.post("/:org/:app/messages") { request, context in
            try await easemob(request, context) { app in
                let messages = try EasemobREST.legacyMessages(try await body(request, context), newID: try messageIDs(request))
                return try await easemobSend(messages, app, request) { _, _ in "success" }
            }
        }
        for (path, kind) in [("users", ChatKind.oneToOne), ("chatgroups", ChatKind.group)] {
            router.post("/:org/:app/messages/\(path)") { request, context in
                try await easemob(request, context) { app in
                    let messages = try EasemobREST.messages(try await body(request, context), kind: kind, newID: try messageIDs(request))
                    return try await easemobSend(messages, app, request) { _, id in id }
                }
            }
        }
    }

    /// Runs an Easemob handler: the app of the path (404 when none is bound), the app token
    /// (401), and every refusal in the vendor's error shape.
    func easemob(_ request: Request, _ context: Context, authenticated: Bool = true, _ handler: (EasemobApp) async throws -> Response) async throws -> Response {
        do {
            let org = try parameter("org", context)
            let name = try parameter("app", context)
            guard let binding = await apps.binding(.easemob, key: org + "/" + name) else {
                throw EasemobFailure(status: .notFound, error: "organization_application_not_found", description: "Could not find application for \(org)/\(name)")
            }
            if authenticated {
                guard let token = request.bearerKey else { throw EasemobFailure.unauthorized }
                let now = Instant.now
                // A backend reuses its token: checked once (HMAC, base64), then remembered until it expires.
                if !apps.checkedTokens.isValid(token, binding: binding, now: now) {
                    if binding.agoraAppID != nil && token.hasPrefix("007") {
                        // Agora Chat's own app token (AccessToken2), verified with the App Certificate.
                        let expiresAt = try verifyAgoraToken(token, binding: binding, now: now)
                        apps.checkedTokens.remember(token, binding: binding, expiresAt: expiresAt)
                    } else {
                        switch AppToken.check(token, signingKey: binding.signingKey, now: now) {
                        case .valid(let expiresAt): apps.checkedTokens.remember(token, binding: binding, expiresAt: expiresAt)
                        case .expired: throw EasemobFailure.expired
                        case .invalid: throw EasemobFailure.unauthorized
                        }
                    }
                }
            }
            return try await handler(EasemobApp(binding: binding, tenant: try await apps.tenant(binding.app), org: org, name: name))
        } catch let failure as EasemobFailure {
            return failure.response()

        } catch let error as InputError {
            return EasemobFailure(error).response()
        } catch let error as ServiceError {
            if error.code == ServiceError.clientClosed.code { throw error }  // nobody to answer: counted as 499 by the middleware
            return EasemobFailure(error).response()
        } catch let error as StoreError {
            return EasemobFailure(ServiceError.store(error)).response()
        } catch {
            logger.error("easemob request failed", metadata: ["error": "\(error)"])
            return EasemobFailure(status: .internalServerError, error: "internal_server_error", description: "see the service log").response()
        }
    }

    /// The vendor's answer envelope.
    /// - Parameters:
    ///   - extra: top-level fields after `data` (`count`, `params` of lists).
    func envelope(
        _ app: EasemobApp, _ request: Request, action: String, entities: [JSONValue]? = nil, data: JSONValue? = nil, extra: [(key: String, value: JSONValue)] = []
    ) -> Response {
        let path = "/" + request.uri.path.split(separator: "/").dropFirst(2).joined(separator: "/")
        var entries: [(key: String, value: JSONValue)] = [
            ("action", .string(action)), ("application", .string(app.application)), ("path", .string(path)),
            ("uri", .string("/\(app.org)/\(app.name)\(path)")),
        ]
        if let entities { entries.append(("entities", .array(entities))) }
        if let data { entries.append(("data", data)) }
        entries += extra
        entries += [
            ("timestamp", .int(Instant.now.milliseconds)), ("duration", 0), ("organization", .string(app.org)), ("applicationName", .string(app.name)),
        ]
        return json(.object(JSONObject(entries)))
    }

    /// A query on a user the app must know (404 otherwise).
    func query(_ app: EasemobApp, user: String, _ call: JSONValue, dialect: String = "agora-silent") async throws -> JSONValue {
        let now = Instant.now
        let result = try await answering { () async throws -> JSONValue? in
            try await app.tenant.reading { facade in
                try await facade.reading(EditScope(app: true, users: [user])) { edit in
                    guard try edit.user(user) != nil else { return nil }
                    return try edit.query(call, dialect: dialect, user: user, now: now)
                }
            }
        }
        guard let result else {
            throw EasemobFailure(status: .notFound, error: "service_resource_not_found", description: "Service resource not found: user \(JSONWriter.quoted(user))")
        }
        return result
    }

    /// Sends, refusing the whole request when a target is unknown; `data` maps each target to `value(target, message id)`.
    func easemobSend(_ messages: [VendorMessage], _ app: EasemobApp, _ request: Request, value: (String, String) -> String) async throws -> Response {
        let result: VendorSendResult
        do {
            result = try await send(messages, in: app.tenant)
        } catch let error as ServiceError where error.code == Self.unknownTargetCode {
            let unknown = (error.found ?? "").split(separator: ",")
            let what = messages.first?.isGroup == true ? "group" : "user"
            throw EasemobFailure(
                status: .notFound, error: "service_resource_not_found",
                description: "Service resource not found: \(what) \(JSONWriter.quoted(String(unknown.first ?? "")))" + (unknown.count > 1 ? " and \(unknown.count - 1) more" : ""))
        }
        var data = JSONObject()
        for (message, outcome) in result.messages {
            for target in message.targets { data[target] = .string(value(target, outcome.messageID)) }
        }
        var response = envelope(app, request, action: "post", data: .object(data))
        response.headers[.pushBridgeMessages] = result.header
        return response
    }

    /// REST-made calls as facade calls (pointers at the root: the translator checked the body).
    static func easemobCalls(_ calls: [JSONValue]) -> [PushFacade.DialectCall] {
        let now = Instant.now
        return calls.map { PushFacade.DialectCall($0, at: now, pointer: .root) }
    }

    /// Verifies an Agora Chat app token (AccessToken2) against an Agora binding: when it stops being
    /// honoured — its own expiry, and never more than 24 hours from `now` — or the vendor's 401
    /// (expired: "…due to expired access token"; a user token, another app's, one issued in the
    /// future, a forged or malformed one: "Unable to authenticate (OAuth)").
    func verifyAgoraToken(_ token: String, binding: VendorBinding, now: Instant) throws -> Instant {
        guard let appID = binding.agoraAppID else { throw EasemobFailure.unauthorized }
        do {
            let seconds = now.milliseconds / 1000
            let verified = try AgoraAccessToken.verifyAppToken(
                token, appID: appID, appCertificate: String(decoding: binding.secret, as: UTF8.self), now: seconds)
            return Instant(milliseconds: min(verified.expiresAt, seconds + AgoraAccessToken.maximumSeconds) * 1000)
        } catch .expired {
            throw EasemobFailure.expired
        } catch {
            throw EasemobFailure.unauthorized
        }
    }

    /// Agora Chat's `{"grant_type": "agora"}` (the app token rides in `Authorization`).
    static func agoraTokenRequest(_ body: JSONValue) throws {
        let r = try FieldReader(body, at: .root, what: "{\"grant_type\": \"agora\"}")
        try r.allowOnly(["grant_type"], context: "an Agora Chat token request")
        let grant = try r.string("grant_type", expected: "\"agora\"")
        guard grant == "agora" else {
            throw EasemobFailure(status: .badRequest, error: "unsupported_grant_type", description: "/grant_type: expected \"agora\" (this app is bound with Agora Chat's App ID and App Certificate), found \(JSONWriter.quoted(grant))")
        }
    }

    /// `{"grant_type": "client_credentials", "client_id", "client_secret", "ttl"?}` → the token's lifetime.
    static func tokenRequest(_ body: JSONValue, binding: VendorBinding) throws -> (Int64, String) {
        let r = try FieldReader(body, at: .root, what: "{\"grant_type\", \"client_id\", \"client_secret\", \"ttl\"?}")
        try r.allowOnly(["grant_type", "client_id", "client_secret", "ttl"], context: "a token request")
        let grant = try r.string("grant_type", expected: "\"client_credentials\"")
        guard grant == "client_credentials" else {
            throw EasemobFailure(status: .badRequest, error: "unsupported_grant_type", description: "/grant_type: expected \"client_credentials\", found \(JSONWriter.quoted(grant))")
        }
        let id = try r.string("client_id", expected: "the app's client_id")
        let secret = try r.string("client_secret", expected: "the app's client_secret")
        let ttl = try r.optionalInt("ttl", in: 0...315_360_000, expected: "the token lifetime in seconds (0: the app's default)") ?? 0
        guard id == binding.account else { throw EasemobFailure(status: .badRequest, error: "invalid_grant", description: "client_id does not match") }
        guard AccessKey.matches(binding.secret, Array(SHA256.hash(data: Array(secret.utf8)))) else {
            throw EasemobFailure(status: .badRequest, error: "invalid_grant", description: "client_secret does not match")
        }
        return (ttl == 0 ? binding.tokenSeconds : Int64(ttl), id)
    }

    static func noTemplate(_ name: String) -> EasemobFailure {
        EasemobFailure(status: .notFound, error: "service_resource_not_found", description: "Service resource not found: template \(JSONWriter.quoted(name))")
    }

    /// A template answer with `createAt` / `updateAt` (the time of the call: templates keep no times).
    static func withTimes(_ data: JSONValue, _ now: Instant) -> JSONValue {
        guard case .object(let o) = data else { return data }
        return .object(JSONObject(o.entries + [("createAt", .int(now.milliseconds)), ("updateAt", .int(now.milliseconds))]))
    }
}
