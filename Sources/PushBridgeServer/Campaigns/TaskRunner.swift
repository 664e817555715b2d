import Logging
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeVendorREST
import Synchronization

/// Runs one app's push tasks: the oldest pending task whose start has come, a page of receivers at a
/// time — read in code-point order after the task's cursor (one read with the task), then sent as the
/// task's family makes its messages and recorded (cursor and progress) in one update beside the
/// app's writer, in the store's background turn (requests' writes waiting go first) — until none is
/// pending; then it sleeps until the next start or a new task. While an unpaced task's page is
/// written in parts, its next page is read and prepared (ruling 197).
///
/// A page is sent only with its record: when the task's cursor moved since the page was read
/// (another node recorded it) or the task ended, the update writes nothing and the task is read
/// again. Its messages' ids name the task and the receiver, so a receiver is never pushed twice
/// even by a page read twice. A task's deliveries go in the outbox's second lane
/// (``OutboxDelivery/lane``): its pages are decided as fast as the writer takes them, queued ahead of
/// APNs, while chat pushes queued meanwhile are claimed before them.
final class TaskRunner: Sendable {
    struct Settings: Sendable {
        /// Receivers a page (`ServiceConfiguration.pushTaskPageSize`).
        var pageSize: Int
        /// The most receivers a second the app's tasks decide (`nil`: as fast as the writer takes them):
        /// pages are made small (``receiversAPage``) and spaced, so that a broadcast does not take the
        /// app's writer, APNs or the devices' servers all at once.
        var receiversPerSecond: Int?
        /// How long it sleeps with nothing due, unless woken (a task made through this node wakes it;
        /// one made through another node, or left by a node that died, is found at the next look).
        var idleMilliseconds: Int64 = 60_000
        /// How long after its app opens it first looks, unless woken: the request that opened the app
        /// goes first, and apps opened together (at start) do not all read at once.
        var firstLookMilliseconds: Int64 = 1_000

        /// The pages a second of a paced task (``receiversPerSecond`` set): its receivers go in that
        /// many small, even pages rather than in bursts of ``pageSize``, so a chat message waits
        /// behind a short write, not a long one.
        static let pacedPagesASecond = 50

        /// Receivers a page: ``pageSize``, and for a paced task at most its rate over
        /// ``pacedPagesASecond`` (at least one).
        var receiversAPage: Int {
            guard let rate = receiversPerSecond else { return pageSize }
            return min(pageSize, max(1, rate / Self.pacedPagesASecond))
        }
    }

    let tenant: AppTenant
    /// What makes each family's task messages, the native API's included.
    let families: [String: any PushTaskFamily]
    let settings: Settings
    let metrics: ServiceMetrics
    let logger: Logger
    private let signal = WakeSignal()
    private let stopping = Mutex(false)
    /// The task whose pages run now, as its last page recorded here left it (`nil`: look for one).
    private let current = Mutex<PushTask?>(nil)
    /// The page after the last one recorded here, read and prepared while that one was written.
    private let ahead = Mutex<ReadPage?>(nil)

    /// Whether it reads a page ahead: for an unpaced task (a paced one waits between pages anyway), on a
    /// store that lets requests' writes in between a page's parts. Where a page is one update that
    /// requests wait for whole (PostgreSQL), a read beside it made that wait longer: the chat p99 during
    /// a campaign rose by a quarter for 3.5 % of deciding (ruling 197).
    private var readsAhead: Bool { settings.receiversPerSecond == nil && tenant.facade.store.interleavesBackgroundUpdates }

    /// The page read ahead now (`nil`: none).
    var pageReadAhead: ReadPage? { ahead.withLock { $0 } }

    /// A page of a task read after `cursor`, its messages made and prepared, not yet sent.
    struct ReadPage: Sendable {
        var task: Int64
        var cursor: UserID?
        var receivers: [UserID]
        var messages: [VendorMessage]
        var batch: [PushFacade.PreparedMessage]
    }

    init(tenant: AppTenant, families: [String: any VendorREST], settings: Settings, metrics: ServiceMetrics, logger: Logger) {
        self.tenant = tenant
        var all: [String: any PushTaskFamily] = families
        all[NativeTask.family] = NativeTask(registry: tenant.registry)
        self.families = all
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

    /// Runs one page of the task in hand, or of the task due first; or says how long to sleep when
    /// there was none to run.
    func step() async throws -> Step {
        if let task = current.withLock({ $0 }) { return .ran(receivers: try await runPage(of: task)) }
        let pending = try await tenant.reading(rerouting: false) { try await $0.tasks(.pending) }
        tenant.tasksLooked(pending: !pending.isEmpty)
        let now = Instant.now
        guard let task = pending.first(where: { $0.startAt <= now }) else {
            let next = pending.map { $0.startAt.milliseconds - now.milliseconds }.min()
            return .slept(milliseconds: min(next ?? settings.idleMilliseconds, settings.idleMilliseconds))
        }
        return .ran(receivers: try await runPage(of: task))
    }

    /// Sends and records the next page of a task. Where it reads ahead (``readsAhead``), the following
    /// page is read and prepared while this one is written: its turn then starts with its write. A page read
    /// ahead is sent only if the task's cursor is still where it was read after when its turn comes
    /// (the write checks it too), so it is never sent twice.
    /// - Parameter seen: the task as this runner last saw it (its page is read after its cursor).
    /// - Returns: the receivers it read (none: the task had ended, or its last page came empty).
    @discardableResult
    func runPage(of seen: PushTask) async throws -> Int {
        current.withLock { $0 = nil }
        let size = settings.receiversAPage
        let task: PushTask
        let read: ReadPage
        if let ready = ahead.withLock({ page in defer { page = nil }; return page }), ready.task == seen.id, ready.cursor == seen.cursor, seen.state == .pending {
            (task, read) = (seen, ready)
        } else {
            guard let (found, receivers) = try await tenant.reading(rerouting: false, { try await $0.nextReceivers(after: seen, limit: size) }) else { return 0 }
            guard let made = try prepared(found, after: found.cursor, receivers: receivers) else {
                _ = try await tenant.update(rerouting: false) { try await $0.cancelTask(found.id, at: .now) }
                logger.error("push task of a family this service does not serve: cancelled", metadata: ["app": "\(tenant.id)", "task": "\(found.id)", "family": "\(found.family)"])
                return 0
            }
            (task, read) = (found, made)
        }
        let (receivers, messages, batch) = (read.receivers, read.messages, read.batch)
        let finished = receivers.count < size
        async let next = finished || !readsAhead ? nil : readAhead(task, after: receivers.last, limit: size)
        let written = try await tenant.updateBesideWriter({
            try await $0.sendPage(of: task.id, from: task.cursor, receivers: receivers, sending: batch, finished: finished, at: .now)
        })
        let following = try? await next  // a page that could not be read ahead is read in its turn
        guard let page = written else { return receivers.count }  // another runner had the page, or the task ended: read it again
        ahead.withLock { $0 = page.task.state == .pending ? following : nil }
        tenant.counted(page.sent.map { (messages[$0.index], $0.outcome) }, metrics: metrics, logger: logger)
        metrics.pushTaskPage(page.progress)
        if page.task.state == .finished {
            metrics.pushTaskEnded("finished")
            logger.info(
                "push task finished",
                metadata: ["app": "\(tenant.id)", "task": "\(task.id)", "targets": "\(page.task.progress.targets)", "pushed": "\(page.task.progress.pushed)"])
        } else if page.task.state == .pending {
            current.withLock { $0 = page.task }
        }
        return receivers.count
    }

    /// A page's messages, made by the task's family and prepared; `nil` when no family of this service
    /// makes them.
    private func prepared(_ task: PushTask, after cursor: UserID?, receivers: [UserID]) throws -> ReadPage? {
        guard let family = families[task.family] else { return nil }
        let messages = try family.taskMessages(request: try JSONParser.parse(task.request), to: receivers, id: { task.messagePrefix + $0 })
        return ReadPage(task: task.id, cursor: cursor, receivers: receivers, messages: messages, batch: try tenant.prepare(messages, now: .now))
    }

    /// The page after `cursor`, read and prepared ahead of its turn (`nil`: none to read, or no family).
    private func readAhead(_ task: PushTask, after cursor: UserID?, limit: Int) async throws -> ReadPage? {
        let receivers = try await tenant.reading(rerouting: false) { try await $0.receivers(of: task, after: cursor, limit: limit) }
        return receivers.isEmpty ? nil : try prepared(task, after: cursor, receivers: receivers)
    }
}
