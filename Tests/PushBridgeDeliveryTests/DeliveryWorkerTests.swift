import Crypto
import Foundation
import PushBridgeAPNsMock
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Synchronization
import Testing

/// Delivery from a facade's outbox into the mock APNs over HTTP/2 with TLS (Specification §13), on both stores.
@Suite("Delivery worker and mock APNs")
struct DeliveryWorkerTests {
    /// Two minutes ago, to the second (sends happen in the past of the real clock the worker uses).
    let t0 = Instant(milliseconds: (Int64(Date().timeIntervalSince1970) - 120) * 1000)

    static var stores: [String] { FacadeScenario.Backing.allCases.map(\.rawValue) }

    static func store(_ kind: String) async throws -> any PushStateStore {
        try await FacadeScenario.Backing(rawValue: kind)!.store()
    }

    /// A worker whose claims outlast any test: a whole suite on two busy cores can hold an
    /// answered attempt for over a minute before the worker records it, and an expired claim is
    /// claimed again (by design: it is how a crashed worker's deliveries come back), which would
    /// count attempts these tests do not make.
    static func worker(_ facade: PushFacade, _ client: APNsClient, policy: DeliveryPolicy = DeliveryPolicy(retryBaseMilliseconds: 20)) -> DeliveryWorker {
        DeliveryWorker(app: "app1", outbox: FacadeOutbox(facade: facade), sender: client, policy: policy, settings: .init(claimSeconds: 3_600))
    }

    @Test("A send queues one delivery per device in its transaction; the worker delivers them with a verified provider token", arguments: stores)
    func delivers(kind: String) async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            let facade = try await exampleDeliveryFacade(try Self.store(kind))
            let outcome = try await facade.sendMessage(try textMessage(id: "m1"), dialect: "agora-silent", now: t0.adding(seconds: 10))
            guard case .push(let request) = try #require(outcome.decisions.first).decision else { Issue.record("not pushed"); return }
            #expect(try await facade.deliveries(ofMessage: "m1").map(\.state) == [.queued, .queued])
            let attempts = try await withAPNsClient(mock, kit, [try kit.tokenCredential()]) { try await Self.worker(facade, $0).drain() }
            #expect(attempts == 2)
            let seen = mock.requests
            #expect(seen.map(\.status) == [200, 200])
            #expect(Set(seen.map(\.token)) == [exampleTokens.development, exampleTokens.production])
            for seen in seen {
                #expect(seen.payload == request.payload)
                #expect(seen.apnsID == APNsID.make(app: "app1", message: "m1", token: seen.token))
                #expect(seen.headers["apns-push-type"] == "alert")
                #expect(seen.headers["apns-priority"] == "10")
                #expect(seen.headers["authorization"]?.hasPrefix("bearer ") == true)
                #expect(seen.headers["apns-expiration"] == String(t0.milliseconds / 1000 + 10 + 86_400))
            }
            #expect(Set(seen.compactMap { $0.headers["apns-topic"] }) == ["io.agora.chatdemo", "io.agora.chatdemo.pad"])
            let records = try await facade.deliveries(ofMessage: "m1")
            #expect(records.map(\.state) == [.delivered, .delivered])
            #expect(records.map(\.attempts) == [1, 1])
            // A repeated send is not a second message: nothing more is queued.
            _ = try await facade.sendMessage(try textMessage(id: "m1"), dialect: "agora-silent", now: t0.adding(seconds: 11))
            #expect(try await facade.deliveries(ofMessage: "m1").count == 2)
            #expect(try await facade.outboxCounts() == OutboxCounts(queued: 0, delivered: 2, failed: 0))
            #expect(try await facade.outboxState() == (queued: 0, nextDue: nil))
        }
    }

    @Test("A push task's deliveries are a lane of their own: a chat push queued after them is claimed first; a claim takes at most its task limit of them", arguments: stores)
    func campaignLane(kind: String) async throws {
        let facade = try await exampleDeliveryFacade(try Self.store(kind))
        let task = PushTask.messagePrefix(of: 7)
        _ = try await facade.sendMessage(try textMessage(id: task + "u1"), dialect: "agora-silent", now: t0.adding(seconds: 10))
        _ = try await facade.sendMessage(try textMessage(id: task + "u2"), dialect: "agora-silent", now: t0.adding(seconds: 11))
        _ = try await facade.sendMessage(try textMessage(id: "m2"), dialect: "agora-silent", now: t0.adding(seconds: 20))
        let outbox = FacadeOutbox(facade: facade)
        let now = t0.adding(seconds: 30)
        let lease = now.adding(seconds: 60)
        // Chat first, then at most the task limit of the campaign's, earliest first (returned in id order).
        let first = try await outbox.claim(now: now, claimUntil: lease, limit: 5, taskLimit: 1)
        #expect(first.map(\.messageID) == [task + "u1", "m2", "m2"] && first.map(\.lane) == [1, 0, 0], "\(first.map(\.messageID))")
        // No room for the campaign: nothing, though its deliveries wait.
        #expect(try await outbox.claim(now: now, claimUntil: lease, limit: 5, taskLimit: 0).isEmpty)
        // The limit binds both lanes together.
        let then = try await outbox.claim(now: now, claimUntil: lease, limit: 2, taskLimit: 10)
        #expect(then.map(\.messageID) == [task + "u1", task + "u2"] && then.map(\.lane) == [1, 1], "\(then.map(\.messageID))")
        let last = try await outbox.claim(now: now, claimUntil: lease, limit: 10, taskLimit: 10)
        #expect(last.map(\.messageID) == [task + "u2"], "\(last.map(\.messageID))")
        #expect(try await facade.outboxState().queued == 6)
    }

    @Test("A campaign fills the window but for the chat reserve: a chat push queued meanwhile is sent before any of the campaign's answers")
    func chatReserve() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            // Every answer takes 30 s: a chat push that waited for a free slot would arrive after the first answer.
            // The test judges the order (the chat push arrives before any answer), not a time: a whole suite on two
            // busy cores can leave the worker's tasks unscheduled for seconds.
            mock.setDefaultAnswer(.slow(milliseconds: 30_000, then: .ok))
            let facade = try await exampleDeliveryFacade(try await FacadeScenario.Backing.sqliteFile.store())  // the worker's window is the same over any store
            let task = PushTask.messagePrefix(of: 3)
            for user in 0..<10 {
                _ = try await facade.sendMessage(try textMessage(id: task + "u\(user)"), dialect: "agora-silent", now: t0.adding(seconds: 10))
            }
            let chat = Set([exampleTokens.development, exampleTokens.production].map { APNsID.make(app: "app1", message: "m9", token: $0) })
            let arrivals = Mutex<(task: Int, chat: Int, answeredBeforeChat: Int?)>((0, 0, nil))
            mock.watchArrivals { request in
                guard chat.contains(request.apnsID ?? "") else { arrivals.withLock { $0.task += 1 }; return }
                let answered = mock.answerCounts.values.reduce(0, +)
                arrivals.withLock {
                    $0.chat += 1
                    if $0.answeredBeforeChat == nil { $0.answeredBeforeChat = answered }
                }
            }
            try await withAPNsClient(mock, kit, [try kit.tokenCredential()]) { client in
                // 10 slots, one kept for chat pushes: nine of the campaign's 20 deliveries go out.
                let settings = DeliveryWorker.Settings(concurrency: 10, claimSeconds: 3_600)
                #expect(settings.chatReserve == 1)
                let worker = DeliveryWorker(app: "app1", outbox: FacadeOutbox(facade: facade), sender: client, policy: DeliveryPolicy(), settings: settings)
                let draining = Task { try await worker.drain() }
                let start = ContinuousClock.now
                while arrivals.withLock({ $0.task }) < 9 && ContinuousClock.now - start < .seconds(25) { try await Task.sleep(for: .milliseconds(10)) }
                try await Task.sleep(for: .milliseconds(200))
                #expect(arrivals.withLock { $0.task } == 9, "the campaign takes the window but for the reserve")
                #expect(mock.answerCounts.isEmpty, "no answer yet: the test's timing assumption holds")
                // A chat push now: claimed at its wake into the reserve (one slot: one of its two devices).
                _ = try await facade.sendMessage(try textMessage(id: "m9"), dialect: "agora-silent", now: t0.adding(seconds: 20))
                worker.wake()
                let sent = ContinuousClock.now
                while arrivals.withLock({ $0.chat }) == 0 && ContinuousClock.now - sent < .seconds(25) { try await Task.sleep(for: .milliseconds(5)) }
                let seen = arrivals.withLock { $0 }
                #expect(seen.task == 9 && seen.chat == 1, "\(seen)")
                #expect(seen.answeredBeforeChat == 0, "the chat push reached APNs before any campaign answer; \(seen.answeredBeforeChat.map(String.init) ?? "none") answered first")
                worker.stop()
                _ = try await draining.value
            }
            mock.watchArrivals(nil)
        }
    }

    @Test("Each APNs answer does what Specification §13 says: delivered, device removed, retried with backoff, or failed", arguments: stores)
    func answers(kind: String) async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            let facade = try await exampleDeliveryFacade(try Self.store(kind))
            try await withAPNsClient(mock, kit, [try kit.tokenCredential()]) { client in
            let worker = Self.worker(facade, client)
            // 410 with a timestamp after the binding: removed. 429 then 200: retried, delivered.
            mock.script(exampleTokens.development, [.unregistered(at: t0.milliseconds)])
            mock.script(exampleTokens.production, [.tooManyRequests(retryAfterSeconds: nil), .serverError(status: 503), .ok])
            _ = try await facade.sendMessage(try textMessage(id: "m1"), dialect: "agora-silent", now: t0.adding(seconds: 10))
            try await worker.drain()
            // Newest binding first: the production device, then the development one.
            var records = try await facade.deliveries(ofMessage: "m1")
            #expect(records.map(\.token) == [exampleTokens.production, exampleTokens.development])
            #expect(records[1].state == .failed && records[1].status == 410 && records[1].reason == "Unregistered" && records[1].deviceRemoved)
            #expect(records[0].state == .queued && records[0].status == 429 && records[0].attempts == 1)
            await #expect(try facade.user("u2")?.state.devices.map(\.token) == [exampleTokens.production])
            for _ in 0..<40 where try await facade.deliveries(ofMessage: "m1")[0].state == .queued {
                try await Task.sleep(nanoseconds: 30_000_000)
                try await worker.drain()
            }
            records = try await facade.deliveries(ofMessage: "m1")
            #expect(records[0].state == .delivered && records[0].attempts == 3)
            #expect(mock.requests.filter { $0.token == exampleTokens.production }.map(\.status) == [429, 503, 200])
            // The same apns-id on every retry.
            #expect(Set(mock.requests.filter { $0.token == exampleTokens.production }.compactMap(\.apnsID)).count == 1)

            // A 410 older than a later re-bind keeps the device; other 4xx fail without retry and remove nothing.
            mock.script(exampleTokens.production, [.gone(reason: "ExpiredToken", timestampMilliseconds: 500)])
            _ = try await facade.sendMessage(try textMessage(id: "m2"), dialect: "agora-silent", now: t0.adding(seconds: 20))
            try await worker.drain()
            records = try await facade.deliveries(ofMessage: "m2")
            #expect(records.map(\.state) == [.failed] && records[0].deviceRemoved == false && records[0].reason == "ExpiredToken")
            await #expect(try facade.user("u2")?.state.devices.count == 1)
            mock.script(exampleTokens.production, [.refuse(status: 400, reason: "BadTopic")])
            _ = try await facade.sendMessage(try textMessage(id: "m3"), dialect: "agora-silent", now: t0.adding(seconds: 30))
            try await worker.drain()
            records = try await facade.deliveries(ofMessage: "m3")
            #expect(records.map(\.state) == [.failed] && records[0].status == 400 && records[0].reason == "BadTopic" && records[0].attempts == 1)
            await #expect(try facade.user("u2")?.state.devices.count == 1)
            // BadDeviceToken removes.
            mock.script(exampleTokens.production, [.badDeviceToken])
            _ = try await facade.sendMessage(try textMessage(id: "m4"), dialect: "agora-silent", now: t0.adding(seconds: 40))
            try await worker.drain()
            #expect(try await facade.deliveries(ofMessage: "m4").first?.deviceRemoved == true)
            await #expect(try facade.user("u2")?.state.devices.isEmpty == true)
            }
        }
    }

    @Test("403 ExpiredProviderToken: a new provider token, and the retry is delivered")
    func refreshesExpiredProviderToken() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            let facade = try await exampleDeliveryFacade(MemoryStateStore())
            try await withAPNsClient(mock, kit, [try kit.tokenCredential()]) { client in
            let worker = Self.worker(facade, client)
            _ = try await facade.sendMessage(try textMessage(id: "m1"), dialect: "agora-silent", now: t0.adding(seconds: 10))
            try await worker.drain()
            let first = Set(mock.requests.compactMap { $0.headers["authorization"] })
            #expect(first.count == 1, "one token reused for both requests")
            mock.expireProviderTokens(issuedBefore: Int64(Date().timeIntervalSince1970) + 1)
            _ = try await facade.sendMessage(try textMessage(id: "m2"), dialect: "agora-silent", now: t0.adding(seconds: 20))
            // Usually one refresh does it; when the revocation's second has passed meanwhile, the new token
            // is refused too and the next retry (20 ms later) carries a newer one.
            let deadline = Date().addingTimeInterval(60)
            while try await facade.deliveries(ofMessage: "m2").contains(where: { $0.state == .queued }) && Date() < deadline {
                try await worker.drain()
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            #expect(try await facade.deliveries(ofMessage: "m2").map(\.state) == [.delivered, .delivered])
            let m2 = mock.requests.dropFirst(2)
            #expect(m2.filter { $0.status == 403 }.allSatisfy { $0.reason == "ExpiredProviderToken" })
            #expect(m2.contains { $0.status == 403 })
            let tokens = Set(m2.filter { $0.status == 200 }.compactMap { $0.headers["authorization"] })
            #expect(tokens.count == 1 && tokens.isDisjoint(with: first), "the retries carry one new token")
            }
        }
    }

    @Test("Certificate auth: PEM and .p12 client certificates are presented; without one the TLS handshake fails and the delivery waits")
    func certificateAuth() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(MockAPNs.Configuration(requiresClientCertificate: true)) { mock in
            let sources: [APNsCredential.Source] = [
                .certificate(certificateFile: kit.path("client.pem"), privateKeyFile: kit.path("client-key.pem")),
                .pkcs12(file: kit.path("client.p12"), passwordFile: kit.path("client.p12.password")),
            ]
            for (i, source) in sources.enumerated() {
                let facade = try await exampleDeliveryFacade(MemoryStateStore())
                _ = try await facade.sendMessage(try textMessage(id: "m\(i)"), dialect: "agora-silent", now: t0.adding(seconds: 10))
                _ = try await withAPNsClient(mock, kit, [try APNsCredential(topics: ["*"], source: source)]) { try await Self.worker(facade, $0).drain() }
                #expect(try await facade.deliveries(ofMessage: "m\(i)").map(\.state) == [.delivered, .delivered], "\(source)")
                #expect(mock.requests.allSatisfy { $0.headers["authorization"] == nil })
            }
            // Token auth against a mock that wants a client certificate: no TLS session, retried later.
            let facade = try await exampleDeliveryFacade(MemoryStateStore())
            _ = try await facade.sendMessage(try textMessage(id: "x"), dialect: "agora-silent", now: t0.adding(seconds: 10))
            _ = try await withAPNsClient(mock, kit, [try kit.tokenCredential()]) { try await Self.worker(facade, $0).drain() }
            let records = try await facade.deliveries(ofMessage: "x")
            #expect(records.map(\.state) == [.queued, .queued])
            #expect(records.allSatisfy { $0.status == nil && $0.reason != nil })
        }
    }

    @Test("A credential file that cannot be used is named, and its content never shown")
    func badCredentials() throws {
        let kit = try DeliveryKit()
        let secretText = "-----BEGIN PRIVATE KEY-----\nTOPSECRETNOTAKEY\n-----END PRIVATE KEY-----\n"
        let bad = try kit.write("bad.p8", secretText)
        let cases: [(APNsCredential.Source, String)] = [
            (.token(keyFile: bad, keyID: DeliveryKit.keyID, teamID: DeliveryKit.teamID), bad),
            (.token(keyFile: kit.path("missing.p8"), keyID: DeliveryKit.keyID, teamID: DeliveryKit.teamID), kit.path("missing.p8")),
            (.token(keyFile: kit.path("AuthKey_\(DeliveryKit.keyID).p8"), keyID: "SHORT", teamID: DeliveryKit.teamID), kit.path("AuthKey_\(DeliveryKit.keyID).p8")),
            (.certificate(certificateFile: bad, privateKeyFile: nil), bad),
            (.pkcs12(file: kit.path("client.p12"), passwordFile: bad), kit.path("client.p12")),
        ]
        for (source, file) in cases {
            do {
                _ = try APNsCredential(topics: ["*"], source: source)
                Issue.record("accepted \(source)")
            } catch let error as DeliveryError {
                #expect(error.subject == file, "\(error)")
                #expect(!"\(error)".contains("TOPSECRET"))
            }
        }
    }

    @Test("The policy: backoff doubles with jitter, honours Retry-After, stops at the maximum age")
    func policy() {
        let policy = DeliveryPolicy(maximumAgeSeconds: 60, retryBaseMilliseconds: 1_000, retryCapMilliseconds: 8_000)
        var delivery = OutboxDelivery(
            id: 7, messageID: "m", receiver: "u", token: "ab", environment: .production, boundAt: Instant(milliseconds: 0), headers: [], payload: [1],
            queuedAt: Instant(milliseconds: 0))
        let now = Instant(milliseconds: 1_000)
        func retryAt(_ attempt: DeliveryAttempt, jitter: Double) -> Int64? {
            policy.judge(attempt, delivery: delivery, sentAt: now, now: now, jitter: jitter).settlement.retryAt.map { $0.milliseconds - now.milliseconds }
        }
        let busy = DeliveryAttempt.answered(APNsAnswer(status: 429, reason: "TooManyRequests"))
        #expect(retryAt(busy, jitter: 0) == 500)
        #expect(retryAt(busy, jitter: 0.999) == 999)
        delivery.attempts = 3
        #expect(retryAt(busy, jitter: 0) == 4_000)
        delivery.attempts = 10
        #expect(retryAt(busy, jitter: 0) == 4_000, "capped at 8 s, half of it fixed")
        #expect(retryAt(.answered(APNsAnswer(status: 503, retryAfterSeconds: 30)), jitter: 0) == 30_000)
        #expect(retryAt(.transportFailure("timeout"), jitter: 0) == 4_000)
        let late = policy.judge(.answered(APNsAnswer(status: 500)), delivery: delivery, sentAt: now, now: t0.adding(seconds: 59), jitter: 0)
        #expect(late.settlement.state == .failed)
        let forbidden = policy.judge(.answered(APNsAnswer(status: 403, reason: "InvalidProviderToken")), delivery: delivery, sentAt: now, now: now, jitter: 0)
        #expect(forbidden.settlement.state == .failed && forbidden.dead == nil)
        let expired = policy.judge(.answered(APNsAnswer(status: 403, reason: "ExpiredProviderToken")), delivery: delivery, sentAt: now, now: now, jitter: 0)
        #expect(expired.settlement.state == .queued && expired.refreshProviderToken && expired.settlement.retryAt == now.adding(seconds: 4),
            "refused again after earlier attempts: backs off")
        var fresh = delivery
        fresh.attempts = 0
        let first = policy.judge(.answered(APNsAnswer(status: 403, reason: "ExpiredProviderToken")), delivery: fresh, sentAt: now, now: now, jitter: 0)
        #expect(first.settlement.state == .queued && first.refreshProviderToken && first.settlement.retryAt == now, "the first time: at once")
        let gone = policy.judge(.answered(APNsAnswer(status: 410, reason: "Unregistered", timestampMilliseconds: 77)), delivery: delivery, sentAt: now, now: now, jitter: 0)
        #expect(gone.dead?.notBoundAfter == Instant(milliseconds: 77))
        let notForTopic = policy.judge(.answered(APNsAnswer(status: 400, reason: "DeviceTokenNotForTopic")), delivery: delivery, sentAt: now, now: now, jitter: 0)
        #expect(notForTopic.dead?.notBoundAfter == now)
        let other400 = policy.judge(.answered(APNsAnswer(status: 400, reason: "BadCollapseId")), delivery: delivery, sentAt: now, now: now, jitter: 0)
        #expect(other400.dead == nil && other400.settlement.state == .failed)
        #expect(APNsID.make(app: "a", message: "m", token: "AB") == APNsID.make(app: "a", message: "m", token: "ab"))
        #expect(APNsID.make(app: "a", message: "m", token: "ab") != APNsID.make(app: "b", message: "m", token: "ab"))
        let id = APNsID.make(app: "a", message: "m", token: "ab")
        #expect(id.count == 36 && id == id.lowercased() && Array(id)[14] == "5")
    }
}
