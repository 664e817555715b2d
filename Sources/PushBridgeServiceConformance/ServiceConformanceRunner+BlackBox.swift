import AsyncHTTPClient
import Foundation
import PushBridgeAPNsMock
import PushBridgeConformance
import PushBridgeJSON
import PushBridgeVendorREST

/// Which captured requests were late: those that reached the capture after a fixture's window
/// closed and before the next send (or the end of the run) are the fixture's, and fail it.
final class CaptureLedger: @unchecked Sendable {
    /// Where the last fixture's window ended (its mark plus what it collected).
    var lastEnd: Int?
    /// Requests that came after the last window closed.
    var late: [MockAPNs.Request] = []
    /// Whether a fixture run so far expected a push.
    var expectedPushes = false

    /// What the run says up front about its capture: nothing reached it although fixtures expected
    /// pushes (the server under test delivers elsewhere, or does not trust the capture's CA).
    /// - Parameter capture: the run's capture.
    func notices(_ capture: APNsCapture) -> [String] {
        guard expectedPushes, capture.mark == 0 else { return [] }
        let connections = capture.mock.connectionCount
        if connections == 0 {
            return [
                "the capture received no connection during the run, though fixtures expected pushes: is the server's APNs URL pointed at "
                    + "\(capture.baseURL), and does it trust the capture's CA (--capture-ca-out)?"
            ]
        }
        return [
            "the server connected to the capture \(connections) time(s) but sent no request, though fixtures expected pushes: does it trust "
                + "the capture's CA (--capture-ca-out) and speak HTTP/2 to \(capture.baseURL)?"
        ]
    }

    /// Fails the last result with its late pushes, if any came.
    func blame(_ results: inout [FixtureResult]) {
        defer { late = [] }
        guard !late.isEmpty, let last = results.indices.last, results[last].failure == nil, results[last].skipped == nil else { return }
        let tokens = Set(late.map(\.token)).sorted().joined(separator: ", ")
        var result = FixtureResult(
            path: results[last].path, name: results[last].name,
            failure: .implementation("late push: \(late.count) request(s) reached APNs after the capture window closed (to \(tokens))"),
            dialects: results[last].dialects)
        result.seconds = results[last].seconds
        results[last] = result
    }
}

extension ServiceConformanceRunner {
    /// The vendor access of the team's own app (`VendorCredentials`).
    func access(_ vendor: ServiceFixture.Vendor, _ credentials: VendorCredentials) async throws -> VendorAccess {
        switch vendor {
        case .easemob:
            guard let e = credentials.easemob else { throw Refused(description: "no Easemob credentials") }
            return try await access(e)
        case .tencent:
            guard let t = credentials.tencent else { throw Refused(description: "no Tencent credentials") }
            return access(t)
        }
    }

    /// Easemob's access: an app token for the client credentials, used as the bearer under `/{org}/{app}`.
    func access(_ e: VendorCredentials.Easemob) async throws -> VendorAccess {
        let token = try await call(
            "POST", "/\(e.org)/\(e.app)/token",
            body: ["grant_type": "client_credentials", "client_id": .string(e.clientID), "client_secret": .string(e.clientSecret)], bearer: nil,
            what: "the app token")
        guard case .string(let bearer)? = token.body["access_token"] else { throw Refused(description: "the token answer has no access_token") }
        return VendorAccess(prefix: "/\(e.org)/\(e.app)", bearer: bearer, query: "")
    }

    /// Tencent's access: the query of every request, with a UserSig of the administrator's for an hour.
    func access(_ t: VendorCredentials.Tencent) -> VendorAccess {
        let sig = UserSig.generate(sdkAppID: t.sdkAppID, identifier: t.administrator, secretKey: t.secretKey, time: Int64(Date().timeIntervalSince1970), expire: 3600)
        return VendorAccess(
            prefix: "", bearer: nil,
            query: "sdkappid=\(t.sdkAppID)&identifier=\(t.administrator)&usersig=\(sig)&random=\(UInt32.random(in: 0...UInt32.max))&contenttype=json")
    }

    /// Deletes, on the team's app, the users and named groups the fixture is about to make, so that
    /// every fixture starts from nothing (answers are not checked: most are "not found").
    func clear(_ fixture: ServiceFixture, _ target: Target) async throws {
        var users: [String] = []
        var groups: [String] = []
        func add(_ user: JSONValue?) { if case .string(let name)? = user, !users.contains(name) { users.append(name) } }
        for step in fixture.steps {
            if let device = step.device { add(.string(device.user)) }
            guard !step.isNative, let body = step.body else { continue }
            switch (fixture.vendor, step.method, step.path) {
            case (.easemob, "POST", "/users"):
                for item in body.arrayValue ?? [body] { add(item["username"]) }
            case (.tencent, _, let path) where path.hasPrefix("/v4/im_open_login_svc/"):
                add(body["UserID"])
                for item in body["Accounts"]?.arrayValue ?? [] { add(item) }
            case (.tencent, _, "/v4/group_open_http_svc/create_group"):
                if case .string(let id)? = body["GroupId"] { groups.append(id) }
            default: break
            }
        }
        let vendor = target.access
        switch fixture.vendor {
        case .easemob:
            for user in users {
                _ = try? await call("DELETE", vendor.prefix + "/users/" + user, body: nil, bearer: vendor.bearer, what: "clearing user \(user)")
            }
        case .tencent:
            let query = "?" + vendor.query
            for group in groups {
                _ = try? await call("POST", "/v4/group_open_http_svc/destroy_group" + query, body: ["GroupId": .string(group)], bearer: nil, what: "clearing group \(group)")
            }
            if !users.isEmpty {
                let items: [JSONValue] = users.map { ["UserID": .string($0)] }
                _ = try? await call("POST", "/v4/im_open_login_svc/account_delete" + query, body: ["DeleteItem": .array(items)], bearer: nil, what: "clearing accounts")
            }
        }
    }

    /// Registers a device as the user's app does from the vendor's client SDK: through PushBridge's
    /// native API (admin access), or the team's device hook.
    func register(_ device: ServiceFixture.Device, target: Target, at pointer: JSONPointer) async throws {
        if let app = target.app {
            let calls: JSONValue
            let dialect: String
            if let busiID = device.busiID {
                dialect = "tencent-tim"
                calls = [["call": "setToken", "busiId": .int(Int64(busiID)), "token": .string(device.token)], ["call": "doBackground", "c2cUnread": 0]]
            } else {
                dialect = "easemob-legacy"
                calls = [
                    ["call": "initializeSDK", "appkey": .string("conform#\(app.id)"), "apnsCertName": .string(device.certificate ?? "")],
                    ["call": "bindDeviceToken", "deviceToken": .string(device.token)],
                ]
            }
            _ = try await call(
                "POST", "/v1/apps/\(app.id)/users/\(device.user)/calls?dialect=\(dialect)", body: calls, bearer: app.key, what: "device (\(pointer)) through the native API")
            return
        }
        guard let hook = deviceHook else { throw Refused(description: "\(pointer): a device step needs --device-hook") }
        let arguments = [target.vendor.rawValue, device.user, device.token, device.certificate ?? device.busiID.map(String.init) ?? ""]
        let outcome = try await Task.detached {
            try ChildProcess.run(["/bin/sh", "-c", hook + " \"$@\"", "device-hook"] + arguments, timeout: 30)
        }.value
        guard outcome.status == 0 else {
            let why = outcome.timedOut ? "did not finish in 30 s" : outcome.status.map { "exited \($0)" } ?? "was killed by signal \(outcome.signal ?? 0)"
            throw Refused(description: "\(pointer): the device hook \(why): \(String(decoding: outcome.stderr.suffix(2000), as: UTF8.self))")
        }
    }
}
