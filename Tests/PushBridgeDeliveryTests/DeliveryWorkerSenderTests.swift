import Foundation
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeFacade
import PushBridgeServiceTestSupport
import PushBridgeStore
import PushBridgeStoreTestSupport
import Synchronization
import Testing

/// The worker with senders other than `APNsClient`: one that only answers `send` (the protocol's
/// `start` awaits it on a task of its own) and one that calls back at once, inside `start`, before the
/// drain has finished handing out the claim it came from.
@Suite("Delivery worker and other senders")
struct DeliveryWorkerSenderTests {
    let t0 = Instant(milliseconds: (Int64(Date().timeIntervalSince1970) - 120) * 1000)

    /// Answers every request 200 and keeps the `apns-id`s it was sent; every fifth a 500 first, so that
    /// some deliveries are retried.
    final class AnsweringSender: APNsSender {
        let answersAtOnce: Bool
        let sent = Mutex<[String]>([])

        init(answersAtOnce: Bool) { self.answersAtOnce = answersAtOnce }

        func send(_ delivery: OutboxDelivery, apnsID: String, expiration: Int64) async -> DeliveryAttempt {
            await Task.yield()
            return answer(apnsID)
        }

        func start(_ delivery: OutboxDelivery, apnsID: String, expiration: Int64, then done: @escaping @Sendable (DeliveryAttempt) -> Void) {
            guard answersAtOnce else {
                Task { done(await send(delivery, apnsID: apnsID, expiration: expiration)) }
                return
            }
            done(answer(apnsID))
        }

        private func answer(_ apnsID: String) -> DeliveryAttempt {
            let count = sent.withLock { sent in
                sent.append(apnsID)
                return sent.count
            }
            return .answered(APNsAnswer(status: count % 5 == 0 ? 500 : 200, reason: count % 5 == 0 ? "InternalServerError" : nil, apnsID: apnsID))
        }

        func providerTokenExpired(for delivery: OutboxDelivery, issuedAt: Int64, now: Int64) {}
    }

    @Test("Every delivery is attempted and recorded, however the sender calls back; a retried one goes again", .timeLimit(.minutes(1)), arguments: [false, true])
    func everyAttemptRecorded(answersAtOnce: Bool) async throws {
        let facade = try await exampleDeliveryFacade(try await FacadeScenario.Backing.memory.store())
        for i in 0..<20 {
            _ = try await facade.sendMessage(try textMessage(id: "m\(i)"), dialect: "agora-silent", now: t0.adding(seconds: Int64(i)))
        }
        let queued = try await facade.outboxCounts().queued
        #expect(queued == 40)  // two devices each
        let sender = AnsweringSender(answersAtOnce: answersAtOnce)
        let worker = DeliveryWorker(
            app: "app1", outbox: FacadeOutbox(facade: facade), sender: sender, policy: DeliveryPolicy(retryBaseMilliseconds: 1),
            settings: .init(concurrency: 8, claimSeconds: 3_600))
        var attempts = 0
        for _ in 0..<50 where try await facade.outboxCounts().queued > 0 {
            attempts += try await worker.drain()
            try await Task.sleep(for: .milliseconds(20))  // a retry comes due
        }
        #expect(try await facade.outboxCounts() == OutboxCounts(queued: 0, delivered: 40, failed: 0))
        let sent = sender.sent.withLock { $0 }
        #expect(attempts == sent.count)
        // Each delivery once, but for the ones answered 500, which went again.
        let retried = sent.count - Set(sent).count
        #expect(retried == sent.indices.filter { ($0 + 1) % 5 == 0 }.count)
        #expect(Set(sent).count == 40)
    }
}
