import Foundation
import Logging
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeFacade
import PushBridgeStore
import Synchronization

/// The service's delivery to APNs (Specification §13): one ``DeliveryWorker`` per open app, each a child
/// task of ``run()``, started when the app's store opens (every known app at start, so a queue left
/// by a crash is finished) and stopped when the registry closes the app; workers write through the
/// app's group-commit writer and sleep until a write wakes them or a delivery is due.
final class ServiceDelivery: Sendable {
    /// What ``run()`` is asked to do, in order.
    private enum Command: Sendable {
        case start(AppTenant)
        /// Stop a tenant's worker and answer once it has ended.
        case stop(AppTenant, CheckedContinuation<Void, Never>)
    }
    let settings: ServiceConfiguration.Delivery
    /// Whether a worker ends every claim at start: only when this process alone uses the store
    /// (SQLite). On a shared PostgreSQL, another node's claims must lapse instead.
    let releasesClaimsAtStart: Bool
    let client: APNsClient
    let policy: DeliveryPolicy
    let feedback: FeedbackNotifier?
    let metrics: ServiceMetrics
    let logger: Logger
    /// The running workers, for ``wake(_:)``.
    private let workers = Mutex<[String: DeliveryWorker]>([:])
    private let commands: (stream: AsyncStream<Command>, continuation: AsyncStream<Command>.Continuation) = AsyncStream.makeStream()
    /// Whether ``run()`` has started (it runs once), and its end.
    private let ran = Mutex(false)
    private let runEnd = WorkerEnd()
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
                    baseURL: $0, trustedCAFile: settings.caFile, requestTimeoutSeconds: settings.requestTimeoutSeconds, connectionsPerIdentity: settings.connections,
                    eventLoopNice: settings.apnsThreadNice)
            }
            ?? APNsClient.Endpoint(
                trustedCAFile: settings.caFile, requestTimeoutSeconds: settings.requestTimeoutSeconds, connectionsPerIdentity: settings.connections,
                eventLoopNice: settings.apnsThreadNice)
        do {
            client = try APNsClient(endpoint: endpoint, credentials: credentials)
        } catch let error as DeliveryError {
            throw ConfigurationError(source: "apns-ca-file", key: "apns-ca-file", expected: "\(error.subject): \(error.expected)", found: nil)
        }
        policy = DeliveryPolicy(maximumAgeSeconds: settings.maximumAgeSeconds, retryBaseMilliseconds: settings.retryBaseMilliseconds)
        feedback = settings.feedbackURL.map { FeedbackNotifier(url: $0) }
        logger.info(
            "delivery on",
            metadata: ["credentials": "\(credentials.map(\.label).joined(separator: ", "))", "apns": "\(settings.apnsURL ?? "apple")"])
    }

    /// Starts the worker of an app whose store just opened (a child task of ``run()``).
    func start(_ tenant: AppTenant) {
        commands.continuation.yield(.start(tenant))
    }

    /// Stops a tenant's worker (the tenant is being closed): returns once it has ended, its in-flight
    /// deliveries recorded. Keyed by the tenant, not the app: the app may already be open again,
    /// with a worker of its own that goes on.
    func stop(_ tenant: AppTenant) async {
        await withCheckedContinuation { (reply: CheckedContinuation<Void, Never>) in
            if case .terminated = commands.continuation.yield(.stop(tenant, reply)) { reply.resume() }
        }
    }

    /// Looks at an app's outbox now (a write may have queued deliveries).
    func wake(_ app: String) {
        workers.withLock { $0[app] }?.wake()
    }

    /// Runs the workers as child tasks until ``finish()`` or cancellation (the graceful shutdown),
    /// with the feedback poster beside them; then closes the APNs connections. A delivery in flight
    /// when the task is cancelled is sent again after a restart (the same `apns-id`).
    func run() async {
        guard claimsTheRun() else { return }
        defer { runEnd.reached() }
        await withDiscardingTaskGroup { group in
            if let feedback { group.addTask { await feedback.run() } }
            /// Each tenant's worker and its end; a tenant closed and then opened again has two, the
            /// first one stopping.
            var running: [ObjectIdentifier: (worker: DeliveryWorker, end: WorkerEnd)] = [:]
            for await command in commands.stream {
                switch command {
                case .start(let tenant):
                    guard running[ObjectIdentifier(tenant)] == nil else { continue }
                    let worker = makeWorker(tenant)
                    let end = WorkerEnd()
                    running[ObjectIdentifier(tenant)] = (worker, end)
                    workers.withLock { $0[tenant.id] = worker }
                    group.addTask {
                        await worker.run()
                        end.reached()
                    }
                case .stop(let tenant, let reply):
                    guard let (worker, end) = running.removeValue(forKey: ObjectIdentifier(tenant)) else {
                        reply.resume()
                        continue
                    }
                    worker.stop()
                    // Wakes go to the app's current worker: this one's only while it is the current one.
                    workers.withLock { workers in
                        if workers[tenant.id] === worker { workers[tenant.id] = nil }
                    }
                    group.addTask {
                        await end.wait()
                        reply.resume()
                    }
                }
            }
            group.cancelAll()
        }
        workers.withLock { $0.removeAll() }
        await client.shutdown()
    }

    /// Ends ``run()``: no worker starts after, and those running are cancelled.
    func finish() {
        commands.continuation.finish()
    }

    /// Ends ``run()`` and returns once it has closed the APNs connections (for a service that is not
    /// run as an application: closes them itself when ``run()`` never ran).
    func finishAndWait() async {
        finish()
        if claimsTheRun() { await client.shutdown() } else { await runEnd.wait() }
    }

    /// Whether the caller is the first to take the run (``run()`` runs once; after ``finishAndWait()``,
    /// not at all).
    private func claimsTheRun() -> Bool {
        ran.withLock { ran in
            defer { ran = true }
            return !ran
        }
    }

    /// Makes the worker of an app.
    private func makeWorker(_ tenant: AppTenant) -> DeliveryWorker {
        let metrics = metrics
        let logger = logger
        let (client, warnings) = (client, credentialWarnings)
        let observer = DeliveryObserver(
            workerError: { app, error in
                // A worker whose app was just closed is refused by its tenant: it is ending, not failing.
                if let refused = error as? ServiceError, refused.code == ServiceError.stopping.code { return }
                logger.error("delivery worker", metadata: ["app": "\(app)", "error": "\(error)"])
            },
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
        return DeliveryWorker(
            app: tenant.id, outbox: TenantOutbox(tenant: tenant, metrics: metrics), sender: client, policy: policy,
            settings: .init(
                concurrency: settings.concurrency, claimSeconds: settings.leaseSeconds, retentionSeconds: settings.retentionSeconds,
                releasesClaimsAtStart: releasesClaimsAtStart,
                // One process alone (SQLite): every queued delivery wakes the worker, so it looks on
                // its own only as a safety net; shared PostgreSQL: other nodes queue rows too.
                idleLookMilliseconds: releasesClaimsAtStart ? 30_000 : 1_000),
            observer: observer, feedback: feedback)
    }
}

/// The end of a task (a worker's, or the delivery's run): waited for by whoever stops it.
final class WorkerEnd: Sendable {
    private let state = Mutex<(reached: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// The worker's task has returned.
    func reached() {
        let waiters = state.withLock { state in
            state.reached = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the worker's task has returned.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if state.reached { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// An app's outbox: the store's own (`PushStateStore.outbox`: PostgreSQL's statements, a local
/// store's transactions on its queue). Removing dead devices changes users: only a settlement with dead
/// devices takes a turn among the app's writes, before its settlement.
struct TenantOutbox: DeliveryOutbox {
    let tenant: AppTenant
    let metrics: ServiceMetrics

    func claim(now: Instant, claimUntil: Instant, limit: Int, taskLimit: Int) async throws -> [OutboxDelivery] {
        try await tenant.outbox(writes: true) { try await $0.claimDeliveries(dueBy: now, claimUntil: claimUntil, limit: limit, taskLimit: taskLimit) }
    }

    func settle(_ settlements: [DeliverySettlement], dead: [PushFacade.DeadDevice], at now: Instant) async throws -> [PushFacade.RemovedDevice] {
        let removed = dead.isEmpty ? [] : try await tenant.update(waking: false, rerouting: false) { try await $0.removeDeadDevices(dead) }
        let settled = PushFacade.marking(settlements, removedBy: removed)
        try await tenant.outbox(writes: true) { try await $0.settleDeliveries(settled, at: now) }
        return removed
    }

    func releaseClaims() async throws {
        try await tenant.outbox(writes: true) { try await $0.releaseDeliveryClaims() }
    }

    /// Also updates the queue-depth gauge, from the same snapshot, and tells the tenant whether its
    /// outbox was empty (an app with deliveries to make is not closed as idle).
    func nextDue() async throws -> Instant? {
        let writes = tenant.writesBeforeOutboxLook()
        let state = try await tenant.outbox(writes: false) { try await $0.outboxState() }
        tenant.outboxLooked(empty: state.nextDue == nil && state.queued == 0, writesBefore: writes)
        metrics.deliveryQueue(app: tenant.id, depth: state.queued)
        return state.nextDue
    }

    func prune(settledBefore cutoff: Instant) async throws -> Int {
        try await tenant.outbox(writes: true) { try await $0.pruneDeliveries(settledBefore: cutoff) }
    }

    func counts() async throws -> OutboxCounts {
        try await tenant.outbox(writes: false) { try await $0.outboxCounts() }
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
