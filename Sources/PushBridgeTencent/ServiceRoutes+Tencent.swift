import Foundation
import Hummingbird
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeServer
import PushBridgeStore
import PushBridgeVendorREST

extension ServiceRoutes {
    /// Tencent Cloud IM server REST (Specification §12) at the vendor's own path,
    /// `POST /v4/{service}/{command}?sdkappid=&identifier=&usersig=&random=&contenttype=json`.
    /// Every answer is HTTP 200 with `ActionStatus`, `ErrorCode` and `ErrorInfo`, as Tencent's.
    func registerTencent(on router: RecordingRouter<Context>) {
        router.post("/v4/:service/:command") { request, context in
            do {
                let path = try parameter("service", context) + "/" + parameter("command", context)
                guard let command = TencentREST.Command(rawValue: path) else {
                    throw TencentREST.Failure(code: 60009, info: "no such command: \(path) (PushBridge answers " + TencentREST.Command.allCases.map(\.rawValue).joined(separator: ", ") + ")")
                }
                let (binding, tenant) = try await tencentAccess(request, command: command)
                let body: JSONValue
                do {
                    body = try await self.body(request, context)
                } catch let error as ServiceError where error.status == .badRequest && error.code != "malformed-http" {
                    throw TencentREST.Failure(code: command.jsonCode, info: error.vendorText)
                }
                if command.isAccountCommand { return try await tencentAccounts(body, command: command, in: tenant) }
                if command.managesGroups { return try await tencentGroups(body, command: command, in: tenant) }
                let newID = request.headers[.pushBridgeMessageID] == nil ? nil : try messageIDs(request)
                if command.isCampaignCommand { return try await tencentCampaign(body, command: command, binding: binding, in: tenant, newID: newID) }
                let messages = try TencentREST.messages(body, command: command, administrator: binding.account, newID: newID)
                switch command {
                case .sendMessage:
                    let result = try await tencentSend(messages, in: tenant, unknownCode: 70107)
                    return tencentOK([("MsgTime", .int(Instant.now.milliseconds / 1000)), ("MsgKey", .string(result.header))], messages: result.header)
                case .batchSendMessage:
                    let result = try await send(messages, in: tenant, skippingUnknown: true)
                    var fields: [(key: String, value: JSONValue)] = [("MsgKey", .string(result.messages.first?.outcome.messageID ?? ""))]
                    if !result.unknown.isEmpty {
                        fields.append(("ErrorList", .array(result.unknown.map { .object(JSONObject([("To_Account", .string($0)), ("ErrorCode", 70107)])) })))
                    }
                    return tencentOK(fields, messages: result.header)
                default:
                    // A targeted message (To_Account) is not available in AVChatRoom or Community groups (Ruling 150).
                    if let targeted = messages.first(where: { $0.message["receiverList"] != nil }), let group = targeted.targets.first {
                        try await answering {
                            try await tenant.reading { facade in
                                try await facade.reading(EditScope(groups: [group])) { _ = try Self.tencentGroup(group, in: $0, refusing: ["AVChatRoom", "Community"], code: 10007) }
                            }
                        }
                    }
                    let result = try await tencentSend(messages, in: tenant, unknownCode: 10010, sequencing: true)
                    return tencentOK([("MsgTime", .int(Instant.now.milliseconds / 1000)), ("MsgSeq", .int(result.sequences.first ?? 0))], messages: result.header)
                }
            } catch let failure as TencentREST.Failure {
                return tencentFail(failure.code, failure.info)
            } catch let failure as UserSig.Failure {
                return tencentFail(failure.code, failure.info)
            } catch let error as ServiceError {
                if error.code == ServiceError.clientClosed.code { throw error }  // nobody to answer: counted as 499 by the middleware
                return tencentFail(Self.tencentCode(for: error), error.vendorText)
            } catch let error as InputError {
                return tencentFail(90010, error.vendorText)
            } catch let error as StoreError {
                let answer = ServiceError.store(error)
                return tencentFail(Self.tencentCode(for: answer), answer.vendorText)
            } catch {
                logger.error("tencent request failed", metadata: ["error": "\(error)"])
                return tencentFail(70500, "internal error (see the service log)")
            }
        }
    }

    /// Tencent's code for a refusal of the service's own (the article Drop-in for vendor REST, "Tencent Cloud IM"): the REST
    /// API's common codes for what is wrong with the HTTP request itself, 70169 / 70500 for the store.
    /// - Parameter error: the refusal.
    static func tencentCode(for error: ServiceError) -> Int {
        switch error.status.code {
        case 503: return 70169  // busy or stopping: a timeout, try again later
        case 500...: return 70500  // the store failed
        default:
            // A path segment that does not decode: 60002, "HTTP parse error, check the URL".
            if error.pointer.hasPrefix("{") { return 60002 }
            // The body's size, media type or framing, or a header: 60008, "HTTP request format error".
            return 60008
        }
    }

    /// A send refusing unknown targets with Tencent's code (70107 for accounts, 10010 for groups).
    func tencentSend(_ messages: [VendorMessage], in tenant: AppTenant, unknownCode: Int, sequencing: Bool = false) async throws -> VendorSendResult {
        do {
            return try await send(messages, in: tenant, sequencing: sequencing)
        } catch let error as ServiceError where error.code == Self.unknownTargetCode {
            let first = String((error.found ?? "").split(separator: ",").first ?? "")
            throw TencentREST.Failure(
                code: unknownCode, info: unknownCode == 10010 ? "group \(JSONWriter.quoted(first)) does not exist or was destroyed" : "To_Account \(JSONWriter.quoted(first)) does not exist")
        }
    }

    /// `im_open_login_svc`: accounts registered (with the `tencent-tim` defaults; `Nick` through
    /// `modifySelfProfile`), removed or checked, all in one write.
    func tencentAccounts(_ body: JSONValue, command: TencentREST.Command, in tenant: AppTenant) async throws -> Response {
        let accounts = try TencentREST.accounts(body, command: command)
        let now = Instant.now
        switch command {
        case .checkAccounts:
            let known = try await answering { try await tenant.reading { facade in
                try await facade.reading(EditScope(users: accounts.map(\.id))) { edit in try accounts.map { try edit.user($0.id)?.isConfigured == true } }
            } }
            let items: [JSONValue] = zip(accounts, known).map { account, imported in
                .object(JSONObject([("UserID", .string(account.id)), ("ResultCode", 0), ("ResultInfo", ""), ("AccountStatus", imported ? "Imported" : "NotImported")]))
            }
            return tencentOK([("ResultItem", .array(items))], messages: "")
        case .deleteAccounts:
            let removed = try await answering {
                try await tenant.update { facade in try await facade.edit(EditScope(users: accounts.map(\.id))) { edit in
                    try accounts.map { account -> Bool in
                        guard try edit.user(account.id) != nil else { return false }
                        try edit.removeUser(account.id)
                        return true
                    }
                } }
            }
            let items: [JSONValue] = zip(accounts, removed).map { account, done in
                .object(JSONObject([("ResultCode", .int(done ? 0 : 70107)), ("ResultInfo", .string(done ? "" : "the account does not exist")), ("UserID", .string(account.id))]))
            }
            return tencentOK([("ResultItem", .array(items))], messages: "")
        default:
            let calls = accounts.map { $0.calls.map { PushFacade.DialectCall($0, at: now, pointer: .root) } }
            let scope = EditScope(app: true, users: zip(accounts, calls).flatMap { PushFacade.scope(of: $1, user: $0.id).users })
            try await answering {
                try await tenant.update { facade in try await facade.edit(scope) { edit in
                    for (account, calls) in zip(accounts, calls) {
                        try edit.register(account.id, dialect: "tencent-tim")
                        if !calls.isEmpty { _ = try edit.apply(calls, dialect: "tencent-tim", user: account.id) }
                    }
                } }
            }
            return tencentOK(command == .importAccounts ? [("FailAccounts", .array([]))] : [], messages: "")
        }
    }

    /// The app of `?sdkappid=`, once `?identifier=` and `?usersig=` verify as its administrator's UserSig.
    func tencentAccess(_ request: Request, command: TencentREST.Command) async throws -> (VendorBinding, AppTenant) {
        let query = request.uri.queryParameters
        guard let text = query.get("sdkappid"), !text.isEmpty else { throw TencentREST.Failure(code: 60012, info: "?sdkappid= is missing") }
        guard let id = UInt64(text), let binding = await apps.binding(.tencent, key: String(id)) else {
            throw TencentREST.Failure(code: 70020, info: "SDKAppID \(JSONWriter.quoted(text)) is not bound to any app of this service")
        }
        let identifier = query.get("identifier") ?? ""
        let sig = query.get("usersig") ?? ""
        let now = Instant.now.milliseconds / 1000
        // A backend reuses one UserSig for many requests: verified once (HMAC, zlib, JSON), then
        // remembered until it expires or the binding changes.
        if !apps.verifiedSignatures.isValid(sig, binding: binding, identifier: identifier, now: now) {
            let verified = try UserSig.verify(sig, sdkAppID: id, identifier: identifier, secretKey: String(decoding: binding.secret, as: UTF8.self), now: now)
            apps.verifiedSignatures.remember(sig, binding: binding, identifier: identifier, expiresAt: verified.time + verified.expire)
        }
        guard identifier == binding.account else {
            throw TencentREST.Failure(code: 60010, info: "the request requires the App administrator (identifier \(JSONWriter.quoted(identifier)) is not)")
        }
        return (binding, try await apps.tenant(binding.app))
    }

    func tencentOK(_ fields: [(key: String, value: JSONValue)], messages: String) -> Response {
        var response = json(.object(JSONObject([("ActionStatus", "OK"), ("ErrorInfo", ""), ("ErrorCode", 0)] + fields)))
        if !messages.isEmpty { response.headers[.pushBridgeMessages] = messages }
        return response
    }

    func tencentFail(_ code: Int, _ info: String) -> Response {
        Self.tencentBody(code, info)
    }

    /// Tencent's failure body (HTTP 200 unless a status is given).
    static func tencentBody(_ code: Int, _ info: String, status: HTTPResponse.Status = .ok) -> Response {
        var w = JSONWriter()
        w.write(.object(JSONObject([("ActionStatus", "FAIL"), ("ErrorInfo", .string(info)), ("ErrorCode", .int(Int64(code)))])))
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: w.bytes)))
    }
}
