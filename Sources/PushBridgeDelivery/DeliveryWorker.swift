import Foundation
import Synchronization
import PushBridgeCore
import PushBridgeFacade
import PushBridgeStore

/// Delivers one app's outbox: claims due deliveries, sends them with bounded concurrency, judges
/// each answer (``DeliveryPolicy``) and records the outcomes in batches, removing the devices APNs
/// declared dead. At least once: a delivery is settled only after its answer, so a crash between
/// the two sends it again (with the same `apns-id`).
public final class DeliveryWorker: Sendable {
    /// How a worker paces itself.
    public struct Settings: Sendable, Hashable {
        /// Requests in flight at once.
        public var concurrency: Int
        /// How long a claim lasts (a worker that dies gives its deliveries up then), in seconds.
        public var claimSeconds: Int64
        /// How long delivered and failed deliveries stay readable, in seconds.
        public var retentionSeconds: Int64
        /// Whether to end every claim at start (a store only this process uses: a restart after a
        /// crash resumes at once instead of waiting for the claims to lapse).
        public var releasesClaimsAtStart: Bool
        /// The longest the worker waits, with nothing due, before it looks at the outbox on its own:
        /// ``DeliveryWorker/wake()`` is what starts a delivery queued by this process; the look is for
        /// rows written by another (a node sharing the store), and for claims that lapse.
        public var idleLookMilliseconds: Int64

        /// - Parameters:
        ///   - concurrency: requests in flight at once.
        ///   - claimSeconds: how long a claim lasts.
        ///   - retentionSeconds: how long settled deliveries stay readable.
        ///   - releasesClaimsAtStart: whether to end every claim at start.
        ///   - idleLookMilliseconds: the longest wait, with nothing due, before the worker looks on its own.
        public init(
            concurrency: Int = 256, claimSeconds: Int64 = 60, retentionSeconds: Int64 = 86_400, releasesClaimsAtStart: Bool = true,
            idleLookMilliseconds: Int64 = 1_000
        ) {
            self.concurrency = max(1, concurrency)
            self.claimSeconds = max(1, claimSeconds)
            self.retentionSeconds = retentionSeconds
            self.releasesClaimsAtStart = releasesClaimsAtStart
            self.idleLookMilliseconds = max(1, idleLookMilliseconds)
        }

        /// The window's slots push tasks' deliveries leave to chat pushes: a tenth of
        /// ``concurrency`` (none below ten). A campaign fills the rest; a chat push queued meanwhile
        /// is claimed at once into the reserve instead of waiting for a campaign's answers.
        public var chatReserve: Int { concurrency / 10 }
    }

    public let app: String
    let outbox: any DeliveryOutbox
    let sender: any APNsSender
    let policy: DeliveryPolicy
    let settings: Settings
    let observer: DeliveryObserver
    let feedback: FeedbackNotifier?
    let clock: @Sendable () -> Instant
    private let signal = WakeSignal()
    private let stopping = Mutex(false)

    /// - Parameters:
    ///   - app: the app whose outbox it is (part of every `apns-id`).
    ///   - outbox: the store's outbox.
    ///   - sender: APNs (``APNsClient``).
    ///   - policy: what each answer does.
    ///   - settings: pacing.
    ///   - observer: counters and errors.
    ///   - feedback: where removed devices and final failures are reported, if anywhere.
    ///   - clock: the current instant.
    public init(
        app: String, outbox: any DeliveryOutbox, sender: any APNsSender, policy: DeliveryPolicy, settings: Settings = Settings(),
        observer: DeliveryObserver = DeliveryObserver(), feedback: FeedbackNotifier? = nil,
        clock: @escaping @Sendable () -> Instant = { Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)) }
    ) {
        self.app = app
        self.outbox = outbox
        self.sender = sender
        self.policy = policy
        self.settings = settings
        self.observer = observer
        self.feedback = feedback
        self.clock = clock
    }

    /// New deliveries were queued: look now instead of at the next poll.
    public func wake() { signal.wake() }

    /// Asks ``run()`` to end: it claims nothing more, records the outcomes of what is in flight, and
    /// returns (its app is being closed). Cancelling its task ends it too, cutting off what is in flight.
    public func stop() {
        stopping.withLock { $0 = true }
        signal.wake()
    }

    /// Whether to go on: neither cancelled nor asked to stop.
    private var goesOn: Bool { !Task.isCancelled && !stopping.withLock { $0 } }

    /// Delivers until the task is cancelled or ``stop()`` is called; store errors are reported and
    /// retried after a pause.
    public func run() async {
        if settings.releasesClaimsAtStart {
            do { try await outbox.releaseClaims() } catch { observer.workerError(app, error) }
        }
        var nextPrune = clock()
        while goesOn {
            do {
                let sent = try await drain()
                let now = clock()
                if now >= nextPrune {
                    _ = try await outbox.prune(settledBefore: now.adding(seconds: -settings.retentionSeconds))
                    nextPrune = now.adding(seconds: 60)
                }
                if sent == 0 {
                    let due = try await outbox.nextDue()
                    let idle = settings.idleLookMilliseconds
                    let wait = due.map { min(max($0.milliseconds - clock().milliseconds, 1), idle) } ?? idle
                    await signal.wait(milliseconds: wait)
                }
            } catch {
                if error is CancellationError && !goesOn { return }  // stopped mid-look: not a failure
                observer.workerError(app, error)
                await signal.wait(milliseconds: 1_000)
            }
        }
    }

    /// Sends everything due now (and what becomes due meanwhile, up to an empty claim).
    ///
    /// The loop never waits on the store while requests could be answered: it refills the window
    /// whenever an eighth of it is free, and hands outcomes to the store one batch at a time as a
    /// child task while the next answers come in. Push tasks' deliveries fill the window but for
    /// ``Settings/chatReserve``; a wake (a write that may have queued deliveries) claims chat pushes
    /// at once into whatever is free, so a chat push queued during a campaign waits neither for the
    /// campaign's answers nor for a refill. Claimed but unsettled deliveries (in flight plus waiting
    /// to be recorded) never exceed the concurrency, so a crash sends at most that many again.
    /// - Returns: how many attempts were made.
    @discardableResult
    public func drain() async throws -> Int {
        let concurrency = settings.concurrency
        let refill = max(1, concurrency / 8)
        // Every event comes through one stream: attempts are no tasks at all (the APNs client calls
        // back when an answer comes), and the group holds the wake listener and the settlement in
        // progress alone.
        let (events, sink) = AsyncStream.makeStream(of: DrainEvent.self)
        defer { sink.finish() }
        var next = events.makeAsyncIterator()
        // Attempts end on the APNs client's event loops: their outcomes gather here, and the drain is
        // told once for all that ended before it looked (no task waits for an answer).
        let ended = EndedAttempts(telling: sink)
        return try await withThrowingDiscardingTaskGroup { group in
            var inFlight = 0
            /// Push tasks' deliveries claimed and not yet recorded (in flight or pending).
            var taskClaimed = 0
            var attempts = 0
            var exhausted = false
            /// A wake came since the last claim: a chat push may wait.
            var woken = false
            var settling = false
            var pending: [(OutboxDelivery, DeliveryPolicy.Verdict)] = []
            var pendingSince = clock()
            var listening = false
            /// Why the drain ends early: a claim or a settlement failed.
            var failure: (any Error)?
            defer { group.cancelAll() }  // the wake listener
            drainLoop: while true {
                if !listening {
                    listening = true
                    // Only a wake ends it (the drain's end cancels it): a drain claims again on a
                    // wake, never on a timer.
                    group.addTask { [signal] in
                        await signal.wait(milliseconds: 86_400_000)
                        sink.yield(.woken)
                    }
                }
                let free = concurrency - inFlight - pending.count
                let taskRoom = min(free, max(0, concurrency - settings.chatReserve - taskClaimed))
                // A refill when the tasks' lane could take one (or nothing is in flight); else, after a
                // wake, a claim of chat pushes alone.
                let refills = !exhausted && (taskRoom >= refill || inFlight == 0)
                if goesOn && free > 0 && (refills || woken) {
                    let now = clock()
                    let taskLimit = refills ? taskRoom : 0
                    let claimed: [OutboxDelivery]
                    do {
                        claimed = try await outbox.claim(now: now, claimUntil: now.adding(seconds: settings.claimSeconds), limit: free, taskLimit: taskLimit)
                    } catch {
                        failure = error
                        break drainLoop
                    }
                    woken = false
                    let tasks = claimed.count { $0.lane == 1 }
                    // Both lanes ran short: nothing more is due (a lane cut at its limit may hold more).
                    if refills && claimed.count < free && tasks < taskLimit { exhausted = true }
                    taskClaimed += tasks
                    for delivery in claimed {
                        inFlight += 1
                        let sentAt = clock()
                        start(delivery) { attempt in ended.add(delivery, attempt, sentAt) }
                    }
                }
                // Outcomes are recorded in batches, one write at a time, but never held long.
                if !settling && !pending.isEmpty
                    && (pending.count >= 256 || inFlight == 0 || (exhausted && pending.count >= 32)
                        || clock().milliseconds - pendingSince.milliseconds >= 50)
                {
                    let batch = pending
                    pending.removeAll(keepingCapacity: true)
                    taskClaimed -= batch.count { $0.0.lane == 1 }
                    settling = true
                    group.addTask { [self] in
                        do {
                            try await settle(batch)
                            sink.yield(.settled(nil))
                        } catch {
                            sink.yield(.settled(error))
                        }
                    }
                }
                // Nothing in flight and nothing being recorded: `pending` was handed over just above.
                if inFlight == 0 && !settling { break }
                // `nil`: the drain's task was cancelled; what is in flight is cut off.
                guard let event = await next.next() else { break }
                switch event {
                case .woken:
                    listening = false
                    exhausted = false
                    woken = true
                case .settled(let error):
                    settling = false
                    if let error {
                        failure = error
                        break drainLoop
                    }
                case .attempted:
                    let now = clock()
                    for (delivery, attempt, sentAt) in ended.take() {
                        inFlight -= 1
                        attempts += 1
                        let verdict = policy.judge(attempt, delivery: delivery, sentAt: sentAt, now: now, jitter: Double.random(in: 0..<1))
                        if verdict.refreshProviderToken, case .answered(let answer) = attempt, let issuedAt = answer.providerTokenIssuedAt {
                            sender.providerTokenExpired(for: delivery, issuedAt: issuedAt, now: clock().milliseconds / 1000)
                        }
                        if pending.isEmpty { pendingSince = clock() }
                        pending.append((delivery, verdict))
                    }
                }
            }
            if let failure {
                // As a failed drain always has, it ends after the attempts in flight (their outcomes are
                // not recorded: their claims lapse and they go again).
                while inFlight > 0, let event = await next.next() {
                    if case .attempted = event { inFlight -= ended.take().count }
                }
                throw failure
            }
            return attempts
        }
    }

    /// Starts one attempt; `done` gets what came of it, on the thread the answer came on (the drain
    /// judges it: the client's event loops only carry it over).
    func start(_ delivery: OutboxDelivery, then done: @escaping @Sendable (DeliveryAttempt) -> Void) {
        let id = APNsID.make(app: app, message: delivery.messageID, token: delivery.token)
        let expiration = delivery.queuedAt.milliseconds / 1000 + policy.maximumAgeSeconds
        sender.start(delivery, apnsID: id, expiration: expiration, then: done)
    }

    func settle(_ results: [(OutboxDelivery, DeliveryPolicy.Verdict)]) async throws {
        let now = clock()
        let removed = try await outbox.settle(results.map(\.1.settlement), dead: results.compactMap(\.1.dead), at: now)
        var counts: [String: Int] = [:]
        var byReason: [Pair: Int] = [:]
        var refusedTopics: [String: String] = [:]
        for (delivery, verdict) in results {
            let outcome: String
            switch verdict.settlement.state {
            case .delivered: outcome = "delivered"
            case .queued: outcome = "retried"
            case .failed: outcome = "failed"
            }
            counts[outcome, default: 0] += 1
            byReason[Pair(outcome, DeliveryReason.label(verdict.settlement.reason)), default: 0] += 1
            if verdict.settlement.status == 403, let reason = verdict.settlement.reason, DeliveryReason.credentialReasons.contains(reason) {
                refusedTopics[delivery.header("apns-topic") ?? ""] = reason
            }
        }
        if !removed.isEmpty {
            counts["device-removed"] = removed.count
            for device in removed {
                let reason = results.first { $0.0.id == device.deliveryID }?.1.settlement.reason
                byReason[Pair("device-removed", DeliveryReason.label(reason)), default: 0] += 1
            }
        }
        for (outcome, count) in counts { observer.attempted(app, outcome, count) }
        for (pair, count) in byReason { observer.settled(app, pair.outcome, pair.reason, count) }
        for (topic, reason) in refusedTopics { observer.credentialRefused(app, topic, reason) }
        if let feedback {
            let removedIDs = Set(removed.map(\.deliveryID))
            let failed = results.filter { $0.1.settlement.state == .failed && !removedIDs.contains($0.0.id) }
            feedback.notify(app: app, removed: removed.map { device in
                let reason = results.first { $0.0.id == device.deliveryID }?.1.settlement.reason ?? ""
                return FeedbackNotifier.Removed(user: device.user, token: device.token, reason: reason)
            }, failed: failed.map { FeedbackNotifier.Failed(message: $0.0.messageID, receiver: $0.0.receiver, token: $0.0.token,
                status: $0.1.settlement.status, reason: $0.1.settlement.reason ?? "") }, at: now)
        }
    }
}

/// What ``DeliveryWorker/drain()`` waits for: attempts' ends, or the recording of a batch (with its
/// failure, if it failed).
private enum DrainEvent: Sendable {
    /// Attempts ended (``EndedAttempts/take()`` has them).
    case attempted
    case settled((any Error)?)
    /// A write may have queued deliveries (``DeliveryWorker/wake()``), or the drain ended.
    case woken
}

/// An outcome and its reason label, counted together.
private struct Pair: Hashable {
    let outcome: String
    let reason: String
    init(_ outcome: String, _ reason: String) {
        self.outcome = outcome
        self.reason = reason
    }
}

/// The attempts of a drain that ended and that it has not taken yet: each end is added where its
/// answer came, and the drain is told once (`attempted`) for everything that ends before it takes them.
private final class EndedAttempts: Sendable {
    typealias Ended = (delivery: OutboxDelivery, attempt: DeliveryAttempt, sentAt: Instant)
    private let state = Mutex<(ended: [Ended], told: Bool)>(([], false))
    private let sink: AsyncStream<DrainEvent>.Continuation

    init(telling sink: AsyncStream<DrainEvent>.Continuation) { self.sink = sink }

    /// One attempt ended; the drain is told unless it was told already and has not taken them.
    func add(_ delivery: OutboxDelivery, _ attempt: DeliveryAttempt, _ sentAt: Instant) {
        let tell = state.withLock { state in
            state.ended.append((delivery, attempt, sentAt))
            defer { state.told = true }
            return !state.told
        }
        if tell { sink.yield(.attempted) }
    }

    /// The attempts that ended since the last take, in the order they ended.
    func take() -> [Ended] {
        state.withLock { state in
            state.told = false
            defer { state.ended = [] }
            return state.ended
        }
    }
}
