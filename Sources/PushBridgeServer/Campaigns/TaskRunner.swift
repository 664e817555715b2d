import Logging
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import Synchronization

/// Runs one app's push tasks: the oldest pending task whose start has come, a page of receivers at a
/// time — read in code-point order after the task's cursor, sent as the task's family makes its
/// messages (through the app's writer, like any send), then recorded (cursor and progress) — until
/// none is pending; then it sleeps until the next start or a new task.
///
/// A page whose record did not happen (the node died, another node recorded it first) is sent again:
/// its messages' ids name the task and the receiver, so the sends are answered from their records and
/// push nobody twice. With delivery on, a page waits while the outbox holds more than
/// ``Settings/outboxBudget`` queued deliveries, so a task never queues far ahead of what APNs takes
/// and chat pushes queued meanwhile wait behind at most that many.
final class TaskRunner: Sendable {
    struct Settings: Sendable {
        /// Receivers a page.
        var pageSize = 100
        /// The most receivers a second the app's tasks decide (`nil`: as fast as the writer takes them):
        /// pages are spaced so that a broadcast does not take the app's writer, APNs or the devices'
        /// servers all at once.
        var receiversPerSecond: Int?
        /// The queued deliveries past which a page waits (`nil`: no delivery, no wait).
        var outboxBudget: Int?
        /// How long it sleeps with nothing due, unless woken (a task made through this node wakes it;
        /// one made through another node, or left by a node that died, is found at the next look).
        var idleMilliseconds: Int64 = 60_000
        /// How long after its app opens it first looks, unless woken: the request that opened the app
        /// goes first, and apps opened together (at start) do not all read at once.
        var firstLookMilliseconds: Int64 = 1_000
    }

    let tenant: AppTenant
    let families: [String: any VendorREST]
    let settings: Settings
    let metrics: ServiceMetrics
    let logger: Logger
    private let signal = WakeSignal()
    private let stopping = Mutex(false)

    init(tenant: AppTenant, families: [String: any VendorREST], settings: Settings, metrics: ServiceMetrics, logger: Logger) {
        self.tenant = tenant
        self.families = families
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
    }

    /// Looks at the tasks now (one was made or cancelled).
    func wake() { signal.wake() }

    /// Ends ``run()`` after the page in hand.
    func stop() {
        stopping.withLock { $0 = true }
        signal.wake()
    }

    private var isStopping: Bool { stopping.withLock { $0 } || Task.isCancelled }

    /// Runs pages until stopped; a failure is logged and the look tried again after a second.
    func run() async {
        await signal.wait(milliseconds: settings.firstLookMilliseconds)
        while !isStopping {
            do {
                let started = ContinuousClock.now
                switch try await step() {
                case .slept(let milliseconds): await signal.wait(milliseconds: milliseconds)
                case .ran(let receivers):
                    if let rate = settings.receiversPerSecond, receivers > 0 {
                        await pause(until: started + .milliseconds(Int64(receivers) * 1_000 / Int64(rate)))
                    }
                }
            } catch {
                if let refused = error as? ServiceError, refused.code == ServiceError.stopping.code { return }
                logger.error("push task runner", metadata: ["app": "\(tenant.id)", "error": "\(error)"])
                await signal.wait(milliseconds: 1_000)
            }
        }
    }

    /// What one ``step()`` did.
    enum Step: Equatable {
        /// Ran a page of this many receivers.
        case ran(receivers: Int)
        /// Had no page to run: sleep this long, unless woken.
        case slept(milliseconds: Int64)
    }

    /// Waits until `due` (the pace between pages); a wake meanwhile does not end it, a stop does.
    private func pause(until due: ContinuousClock.Instant) async {
        while !isStopping {
            let left = due - .now
            guard left > .zero else { return }
            let (seconds, attoseconds) = left.components
            await signal.wait(milliseconds: max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
        }
    }

    /// Runs one page of the task due first, or says how long to sleep when there was none to run.
    func step() async throws -> Step {
        let pending = try await tenant.reading(rerouting: false) { try await $0.tasks(.pending) }
        tenant.tasksLooked(pending: !pending.isEmpty)
        let now = Instant.now
        guard let task = pending.first(where: { $0.startAt <= now }) else {
            let next = pending.map { $0.startAt.milliseconds - now.milliseconds }.min()
            return .slept(milliseconds: min(next ?? settings.idleMilliseconds, settings.idleMilliseconds))
        }
        if let budget = settings.outboxBudget {
            let queued = try await tenant.outbox(writes: false) { try await $0.outboxState() }.queued
            if queued > budget { return .slept(milliseconds: 20) }
        }
        return .ran(receivers: try await runPage(of: task.id))
    }

    /// Sends and records the next page of a task.
    /// - Returns: the receivers it read (none: the task had ended, or its last page came empty).
    @discardableResult
    func runPage(of id: Int64) async throws -> Int {
        let size = settings.pageSize
        guard let (task, receivers) = try await tenant.reading(rerouting: false, { try await $0.nextReceivers(of: id, limit: size) }) else { return 0 }
        var progress = TaskProgress(targets: receivers.count)
        if !receivers.isEmpty {
            guard let family = families[task.family] else {
                _ = try await tenant.update(rerouting: false) { try await $0.cancelTask(id, at: .now) }
                logger.error("push task of a family this service does not serve: cancelled", metadata: ["app": "\(tenant.id)", "task": "\(id)", "family": "\(task.family)"])
                return 0
            }
            let messages = try family.taskMessages(request: try JSONParser.parse(task.request), to: receivers, id: { task.messagePrefix + $0 })
            let result = try await tenant.send(messages, skippingUnknown: true, sequencing: false, metrics: metrics, logger: logger)
            for (_, outcome) in result.messages {
                for item in outcome.decisions {
                    switch item.fanOut {
                    case .push: progress.pushed += 1
                    case .suppressed(let reason): progress.suppressed[reason.rawValue, default: 0] += 1
                    }
                }
            }
            // A receiver deleted since the page was read.
            if !result.unknown.isEmpty { progress.suppressed["unknown-user", default: 0] += result.unknown.count }
        }
        let finished = receivers.count < size
        let page = progress
        let recorded = try await tenant.update(rerouting: false) {
            try await $0.recordPage(of: id, from: task.cursor, to: receivers.last, adding: page, finished: finished, at: .now)
        }
        if recorded { metrics.pushTaskPage(page) }
        if recorded && finished {
            metrics.pushTaskEnded("finished")
            logger.info(
                "push task finished",
                metadata: ["app": "\(tenant.id)", "task": "\(id)", "targets": "\(task.progress.targets + progress.targets)", "pushed": "\(task.progress.pushed + progress.pushed)"])
        }
        return receivers.count
    }
}
