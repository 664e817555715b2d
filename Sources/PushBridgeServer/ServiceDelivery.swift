import Foundation
import Logging
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeFacade
import PushBridgeStore
import Synchronization

/// The service's delivery to APNs (SPEC §13): one ``DeliveryWorker`` per app, started when the
/// app's store opens (every known app at start, so a queue left by a crash is finished), writing
/// through the app's group-commit writer.
final class ServiceDelivery: Sendable {
    let settings: ServiceConfiguration.Delivery
    /// Whether a worker ends every claim at start: only when this process alone uses the store
    /// (SQLite). On a shared PostgreSQL, another node's claims must lapse instead.
    let releasesClaimsAtStart: Bool
    let client: APNsClient
    let policy: DeliveryPolicy
    let feedback: FeedbackNotifier?
    let metrics: ServiceMetrics
    let logger: Logger
    private let workers = Mutex<[String: (worker: DeliveryWorker, task: Task<Void, Never>)]>([:])
    private let feedbackTask = Mutex<Task<Void, Never>?>(nil)
    private let stopped = Mutex(false)
    /// One warning per credential and topic per interval, not one per delivery.
    let credentialWarnings: WarningInterval

    /// Reads the credentials and opens the APNs clients.
    /// - Throws: ``ConfigurationError`` for a credential or CA file that cannot be used.
    init(
        settings: ServiceConfiguration.Delivery, releasesClaimsAtStart: Bool = true, metrics: ServiceMetrics, logger: Logger,
        credentialWarningInterval: Duration = .seconds(60)
    ) throws {
        self.releasesClaimsAtStart = releasesClaimsAtStart
        self.credentialWarnings = WarningInterval(interval: credentialWarningInterval)
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        let credentials = try settings.loadCredentials()
        let endpoint =
            settings.apnsURL.map {
                APNsClient.Endpoint(
                    baseURL: $0, trustedCAFile: settings.caFile, requestTimeoutSeconds: settings.requestTimeoutSeconds, connectionsPerIdentity: settings.connections)
            }
            ?? APNsClient.Endpoint(
                trustedCAFile: settings.caFile, requestTimeoutSeconds: settings.requestTimeoutSeconds, connectionsPerIdentity: settings.connections)
        do {
            client = try APNsClient(endpoint: endpoint, credentials: credentials)
        } catch let error as DeliveryError {
            throw ConfigurationError(source: "apns-ca-file", key: "apns-ca-file", expected: "\(error.subject): \(error.expected)", found: nil)
        }
        policy = DeliveryPolicy(maximumAgeSeconds: settings.maximumAgeSeconds, retryBaseMilliseconds: settings.retryBaseMilliseconds)
        feedback = settings.feedbackURL.map { FeedbackNotifier(url: $0) }
        if let feedback { feedbackTask.withLock { $0 = Task { await feedback.run() } } }
        logger.info(
            "delivery on",
            metadata: ["credentials": "\(credentials.map(\.label).joined(separator: ", "))", "apns": "\(settings.apnsURL ?? "apple")"])
    }

    /// Starts the worker of an app whose store just opened.
    func start(_ tenant: AppTenant) {
        guard !stopped.withLock({ $0 }) else { return }
        let metrics = metrics
        let logger = logger
        let (client, warnings) = (client, credentialWarnings)
        let observer = DeliveryObserver(
            workerError: { app, error in logger.error("delivery worker", metadata: ["app": "\(app)", "error": "\(error)"]) },
            settled: { app, outcome, reason, count in
                metrics.delivered(outcome: outcome, reason: reason, count: count)
                logger.debug("deliveries recorded", metadata: ["app": "\(app)", "outcome": "\(outcome)", "reason": "\(reason)", "count": "\(count)"])
            },
            credentialRefused: { app, topic, reason in
                let label = client.credentialLabel(for: topic) ?? "none"
                guard warnings.shouldWarn(about: label + " " + topic, now: .now) else { return }
                logger.warning(
                    "APNs refuses the credential: every delivery with it fails until it is replaced",
                    metadata: ["app": "\(app)", "credential": "\(label)", "topic": "\(topic)", "reason": "\(reason)"])
            })
        let worker = DeliveryWorker(
            app: tenant.id, outbox: TenantOutbox(tenant: tenant, metrics: metrics), sender: client, policy: policy,
            settings: .init(
                concurrency: settings.concurrency, claimSeconds: settings.leaseSeconds, retentionSeconds: settings.retentionSeconds,
                releasesClaimsAtStart: releasesClaimsAtStart,
                // One process alone (SQLite): every queued delivery wakes the worker, so it looks on
                // its own only as a safety net; shared PostgreSQL: other nodes queue rows too.
                idleLookMilliseconds: releasesClaimsAtStart ? 30_000 : 1_000),
            observer: observer, feedback: feedback)
        workers.withLock { workers in
            guard workers[tenant.id] == nil else { return }
            workers[tenant.id] = (worker, Task { await worker.run() })
        }
    }

    /// Stops an app's worker (its tenant is being closed): returns once it has ended.
    func stop(_ app: String) async {
        guard let task = workers.withLock({ $0.removeValue(forKey: app)?.task }) else { return }
        task.cancel()
        await task.value
    }

    /// Looks at an app's outbox now (a write may have queued deliveries).
    func wake(_ app: String) {
        workers.withLock { $0[app]?.worker }?.wake()
    }

    /// Stops the workers (a delivery in flight is settled or, if cut off, sent again after a
    /// restart), posts what feedback it can, and closes the connections.
    func stop() async {
        stopped.withLock { $0 = true }
        let running = workers.withLock { workers in
            defer { workers.removeAll() }
            return Array(workers.values)
        }
        for (_, task) in running { task.cancel() }
        for (_, task) in running { await task.value }
        if let task = feedbackTask.withLock({ $0 }) {
            task.cancel()
            await task.value
        }
        await client.shutdown()
    }
}

/// An app's outbox through its group-commit writer (writes) and reader connections (reads).
struct TenantOutbox: DeliveryOutbox {
    let tenant: AppTenant
    let metrics: ServiceMetrics

    func claim(now: Instant, claimUntil: Instant, limit: Int) async throws -> [OutboxDelivery] {
        try await tenant.write(waking: false, rerouting: false) { try $0.claimDeliveries(now: now, claimUntil: claimUntil, limit: limit) }
    }

    func settle(_ settlements: [DeliverySettlement], dead: [PushFacade.DeadDevice], at now: Instant) async throws -> [PushFacade.RemovedDevice] {
        try await tenant.write(waking: false, rerouting: false) { try $0.settleDeliveries(settlements, dead: dead, at: now) }
    }

    func releaseClaims() async throws {
        try await tenant.write(waking: false, rerouting: false) { try $0.releaseDeliveryClaims() }
    }

    /// Also updates the queue-depth gauge, from the same snapshot, and tells the tenant whether its
    /// outbox was empty (an app with deliveries to make is not closed as idle).
    func nextDue() async throws -> Instant? {
        let writes = tenant.writesBeforeOutboxLook()
        let state = try await tenant.read(rerouting: false) { try $0.outboxState() }
        tenant.outboxLooked(empty: state.nextDue == nil && state.counts.queued == 0, writesBefore: writes)
        metrics.deliveryQueue(app: tenant.id, depth: state.counts.queued)
        return state.nextDue
    }

    func prune(settledBefore cutoff: Instant) async throws -> Int {
        try await tenant.write(waking: false, rerouting: false) { try $0.pruneDeliveries(settledBefore: cutoff) }
    }

    func counts() async throws -> OutboxCounts {
        try await tenant.read(rerouting: false) { try $0.outboxState().counts }
    }
}

/// Says whether a warning about a subject is due: the first time, then once per interval.
final class WarningInterval: Sendable {
    let interval: Duration
    private let last = Mutex<[String: ContinuousClock.Instant]>([:])

    /// - Parameter interval: the least time between two warnings about one subject.
    init(interval: Duration) {
        self.interval = interval
    }

    /// Whether to warn about `subject` now (and, if so, the interval starts again).
    func shouldWarn(about subject: String, now: ContinuousClock.Instant) -> Bool {
        last.withLock { last in
            if let previous = last[subject], now - previous < interval { return false }
            last[subject] = now
            return true
        }
    }
}
