import Foundation
import PushBridgeCore
import PushBridgeStore

extension PushFacade {
    /// A device APNs declared dead (410 `Unregistered` / `ExpiredToken`, 400 `BadDeviceToken` /
    /// `DeviceTokenNotForTopic`), and the delivery that learnt it.
    public struct DeadDevice: Hashable, Sendable {
        /// The delivery whose answer said so.
        public var deliveryID: Int64
        /// The device token.
        public var token: String
        /// The device is removed only if it was not bound again after this instant (APNs's 410
        /// `timestamp`, or when the request was sent).
        public var notBoundAfter: Instant

        public init(deliveryID: Int64, token: String, notBoundAfter: Instant) {
            self.deliveryID = deliveryID
            self.token = token
            self.notBoundAfter = notBoundAfter
        }
    }

    /// A device removed because APNs declared it dead.
    public struct RemovedDevice: Hashable, Sendable {
        public var user: UserID
        public var token: String
        public var deliveryID: Int64
    }

    /// Removes the devices APNs declared dead, then records the delivery attempts.
    ///
    /// A dead device is removed only while its owner has not bound it again after
    /// ``DeadDevice/notBoundAfter`` (Specification §13); the settlement of its delivery then says
    /// `deviceRemoved`. The removal is an update and the settlement the outbox's own; a failure between
    /// them leaves the deliveries claimed, to be settled again when their claim lapses.
    /// - Parameters:
    ///   - settlements: one per attempted delivery.
    ///   - dead: the devices the answers declared dead.
    ///   - now: when the outcomes are recorded.
    /// - Returns: the devices removed.
    public func settleDeliveries(_ settlements: [DeliverySettlement], dead: [DeadDevice], at now: Instant) async throws -> [RemovedDevice] {
        let removed = try await removeDeadDevices(dead)
        try await store.outbox.settleDeliveries(Self.marking(settlements, removedBy: removed), at: now)
        return removed
    }

    /// Removes the devices APNs declared dead (each only while its owner has not bound it again
    /// after ``DeadDevice/notBoundAfter``), in one update: the outbox's settlement follows on its own.
    /// - Parameter dead: the devices the answers declared dead.
    /// - Returns: the devices removed.
    public func removeDeadDevices(_ dead: [DeadDevice]) async throws -> [RemovedDevice] {
        guard !dead.isEmpty else { return [] }
        return try await edit(Self.scope(of: dead)) { try $0.removeDeadDevices(dead) }
    }

    /// What removing dead devices reads: their owners.
    static func scope(of dead: [DeadDevice]) -> EditScope { EditScope(devices: dead.map { $0.token.lowercased() }) }

    /// The settlements, each of a delivery whose device was removed saying so.
    /// - Parameters:
    ///   - settlements: one per attempted delivery.
    ///   - removed: the devices removed.
    public static func marking(_ settlements: [DeliverySettlement], removedBy removed: [RemovedDevice]) -> [DeliverySettlement] {
        let removedIDs = Set(removed.map(\.deliveryID))
        var settled = settlements
        for i in settled.indices where removedIDs.contains(settled[i].id) { settled[i].deviceRemoved = true }
        return settled
    }

    /// Claims due deliveries for a worker (`PushOutbox.claimDeliveries(dueBy:claimUntil:limit:taskLimit:)`):
    /// chat pushes first, then push tasks' deliveries.
    /// - Parameters:
    ///   - now: deliveries due by then, and not claimed past it, are claimed.
    ///   - claimUntil: the end of the claim's lease.
    ///   - limit: the most deliveries claimed.
    ///   - taskLimit: the most of them from push tasks (`nil`: up to `limit`).
    public func claimDeliveries(now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int? = nil) async throws -> [OutboxDelivery] {
        try await store.outbox.claimDeliveries(dueBy: now, claimUntil: claimUntil, limit: limit, taskLimit: taskLimit ?? limit)
    }

    /// Ends every claim (a store one process owns, at start).
    public func releaseDeliveryClaims() async throws {
        try await store.outbox.releaseDeliveryClaims()
    }

    /// Forgets delivered and failed deliveries last changed before `cutoff`; returns how many.
    /// - Parameter cutoff: the oldest change kept.
    public func pruneDeliveries(settledBefore cutoff: Instant) async throws -> Int {
        try await store.outbox.pruneDeliveries(settledBefore: cutoff)
    }

    /// How many deliveries are queued and when the next is due, read in one snapshot (a worker's look:
    /// it costs what the queue holds).
    public func outboxState() async throws -> (queued: Int, nextDue: Instant?) {
        try await store.outbox.outboxState()
    }

    /// How many deliveries the outbox holds in each state (every row: for reports).
    public func outboxCounts() async throws -> OutboxCounts {
        try await store.outbox.outboxCounts()
    }

    /// The outbox deliveries of pushed decisions: one per device, in decision order.
    static func outbox(_ decisions: [ReceiverDecision], messageID: String, now: Instant) -> [OutboxDelivery] {
        var out: [OutboxDelivery] = []
        for item in decisions {
            guard case .push(let request) = item.fanOut else { continue }
            let payload = request.payload  // written out once, shared by the receiver's devices
            // The render class's template, when this payload is it written for this receiver: a store
            // may keep it once for the message.
            var template: (payload: PayloadTemplate, badge: Int)?
            if case .patched(let written, let badge, let receiver) = request.body, receiver == item.receiver { template = (written, badge) }
            for delivery in request.deliveries {
                var queued = OutboxDelivery(
                    messageID: messageID, receiver: item.receiver, token: delivery.device.token,
                    environment: delivery.device.certificate.environment, boundAt: delivery.device.boundAt,
                    headers: delivery.headers.map { HeaderField($0.name, $0.value) }, payload: payload, queuedAt: now)
                queued.template = template
                out.append(queued)
            }
        }
        return out
    }
}
