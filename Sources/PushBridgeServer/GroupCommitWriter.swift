import Dispatch
import Foundation
import Synchronization
import PushBridgeFacade
import PushBridgeStore

/// One app store's writer: one round at a time (a task while writes wait) that takes the writes of
/// concurrent requests and commits them in turns. The queue of writes waiting is the group: a round
/// takes what arrived while the one before it ran, up to `maxBatch`.
///
/// Sends that follow one another in a round are decided as one facade batch: read, decided and
/// committed in one update (``PushFacade/send(_:)-([PreparedMessage])``, awaited), their counters,
/// outbox rows and records written together. Each other update is awaited in its turn.
///
/// A write waits at most the request timeout for its turn: one that waited longer is answered
/// ``ServiceError/busy`` and never run, so a client that got no 2xx can retry without a double.
/// Requests only reach the writer with their whole body read, so a slow client never holds it.
/// An idle writer holds no thread, no timer and no task: a thousand idle apps cost none.
final class GroupCommitWriter: Sendable {
    struct Job {
        let enqueued: ContinuousClock.Instant
        let work: Work
        let state: JobState
        /// Answers the request: `nil` after a successful commit, or why nothing was kept.
        let finish: (ServiceError?) -> Void
    }

    /// Where a write is: waiting for its turn, in a commit, or answered. The writer and the request's
    /// deadline race for it; whoever moves it first decides the answer, and it is answered once.
    final class JobState: Sendable {
        enum Phase { case waiting, running, answered }
        private let phase = Mutex(Phase.waiting)

        /// Moves a waiting write into a commit; `false` when its deadline answered it already.
        func start() -> Bool {
            phase.withLock { phase in
                guard phase == .waiting else { return false }
                phase = .running
                return true
            }
        }

        /// Marks the write answered; returns the phase it was in (`answered`: someone else answered it).
        func answer() -> Phase {
            phase.withLock { phase in
                let was = phase
                phase = .answered
                return was
            }
        }
    }

    enum Work {
        /// A message to send; keeps its own result.
        case send(PushFacade.PreparedMessage, (Result<PushFacade.SendOutcome, any Error>) -> Void)
        /// An update of its own (the facade reads, decides and commits through the store), awaited in
        /// its turn; keeps its own result.
        case update(() async -> Void)

        enum Kind { case send, update }

        /// What kind of work it is: a round commits each run of one kind together.
        var kind: Kind {
            switch self {
            case .send: .send
            case .update: .update
            }
        }
    }

    /// What the writer reports after each commit: the group size and the writes still waiting; and
    /// why a commit failed (its answers say only "store failure": the details go to the log).
    struct Observer: Sendable {
        var committed: @Sendable (_ batch: Int, _ waiting: Int) -> Void = { _, _ in }
        var failed: @Sendable (any Error) -> Void = { _ in }
    }

    /// The writes waiting, and whether the rounds' task runs. Whenever `pending` is not empty, the
    /// task runs (it ends when a round leaves nothing waiting).
    private struct Queue: @unchecked Sendable {
        var pending: [Job] = []
        var scheduled = false
        var stopping = false
        /// The task running the rounds, while it runs.
        var rounds: Task<Void, Never>?
        /// The pause for more writes before a round, while it lasts (a full group ends it).
        var pause: Pause?
    }

    /// The app's facade: sends and updates go through it.
    private let facade: PushFacade
    private let maxBatch: Int
    /// The pause for more writes before a round (nanoseconds), if any.
    private let maxWait: Int64?
    private let timeout: Duration
    /// Whether a request stops waiting at `timeout` even while its commit runs (a store that can stop
    /// answering: PostgreSQL). Without it, a commit that began is waited for (a local file always answers).
    private let answersByDeadline: Bool
    private let observer: Observer
    /// The store's commit turns, when its commits share round trips with other apps': a round takes
    /// its group at its turn.
    private let commitTurns: (any CommitTurns)?
    private let queue = Mutex(Queue())
    /// The writer's own queue: its pause's timer, and its rounds unless given a queue to share.
    private let executor: DispatchQueue
    /// Where the rounds run between their waits: a dispatch queue, never the cooperative pool (which
    /// a caller blocking its threads could starve).
    private let roundsExecutor: QueueTaskExecutor

    /// Makes the writer (it starts nothing: its executor runs only while writes wait).
    /// - Parameters:
    ///   - facade: the app's facade, over its store.
    ///   - maxBatch: the most writes per commit.
    ///   - maxWaitMicroseconds: how long to wait for more writes when the group is not full.
    ///   - timeout: the longest a write may wait for its turn.
    ///   - answersByDeadline: whether every write is answered by `timeout` even when its commit has
    ///     not ended (``ServiceError/storeTimedOut``): for a store over the network.
    ///   - rounds: where the rounds run between their waits (a queue shared by a service's writers);
    ///     `nil`: the writer's own queue.
    ///   - name: the executor's label.
    ///   - observer: told about each commit (metrics).
    init(
        facade: PushFacade, maxBatch: Int, maxWaitMicroseconds: Int, timeout: Duration,
        answersByDeadline: Bool = false, rounds: QueueTaskExecutor? = nil, name: String, observer: Observer = Observer()
    ) {
        self.facade = facade
        self.maxBatch = max(1, maxBatch)
        self.maxWait = maxWaitMicroseconds > 0 ? Int64(maxWaitMicroseconds) * 1_000 : nil
        self.timeout = timeout
        self.answersByDeadline = answersByDeadline
        self.observer = observer
        commitTurns = facade.store as? any CommitTurns
        executor = DispatchQueue(label: name)
        roundsExecutor = rounds ?? QueueTaskExecutor(executor)
    }

    /// Writes waiting for the writer.
    var depth: Int { queue.withLock { $0.pending.count } }

    /// Sends a message in the next group commit, decided together with the sends next to it, and
    /// returns the outcome once that commit is durable.
    /// - Throws: why the message failed (nothing of it was kept), or ``ServiceError`` as ``update(_:)``.
    /// - Parameter message: the prepared message (its required targets are checked when it is decided).
    func send(_ message: PushFacade.PreparedMessage) async throws -> PushFacade.SendOutcome {
        try await submit { keep in .send(message, keep) }
    }

    /// Runs `body` — one facade update, which reads, decides and commits through the store
    /// (``PushStateStore/update(reading:deciding:)``) — in its turn among the app's writes, and returns
    /// its result once committed.
    /// - Throws: what `body` threw (a rejected call: nothing was written; a store failure), or
    ///   ``ServiceError`` when it waited too long or the service is stopping.
    func update<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await submit { keep in
            .update {
                do { keep(.success(try await body())) } catch { keep(.failure(error)) }
            }
        }
    }

    /// Queues the work `make` builds and waits for its answer. A write that waited past the timeout
    /// for its turn is answered ``ServiceError/busy`` and never runs. With `answersByDeadline`, the
    /// answer comes at the timeout whatever the writer is doing: `busy` for a write still waiting, and
    /// ``ServiceError/storeTimedOut`` for one whose commit has not ended (a store that stopped
    /// answering) — its commit may still end, and a retry with the same message id gets its outcome.
    private func submit<T: Sendable>(_ make: (@escaping (Result<T, any Error>) -> Void) -> Work) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            nonisolated(unsafe) var result: Result<T, any Error>?
            let state = JobState()
            let job = Job(
                enqueued: .now,
                work: make { result = $0 },
                state: state,
                finish: { failure in
                    guard state.answer() != .answered else { return }
                    if let failure { continuation.resume(throwing: failure) } else { continuation.resume(with: result!) }
                })
            let accepted = queue.withLock { queue -> Bool in
                guard !queue.stopping else { return false }
                queue.pending.append(job)
                if !queue.scheduled {
                    queue.scheduled = true
                    queue.rounds = Task(executorPreference: roundsExecutor) { [self] in await runRounds() }
                } else if queue.pending.count == maxBatch {
                    // A full group need not wait out the pause before its round.
                    queue.pause?.end()
                }
                return true
            }
            guard accepted else {
                continuation.resume(throwing: ServiceError.stopping)
                return
            }
            guard answersByDeadline else { return }
            let deadline = DispatchTime.now() + .nanoseconds(Int(timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000))
            DispatchQueue.storageTimers.asyncAfter(deadline: deadline) {
                switch state.answer() {
                case .waiting: continuation.resume(throwing: ServiceError.busy)
                case .running: continuation.resume(throwing: ServiceError.storeTimedOut)
                case .answered: break
                }
            }
        }
    }

    /// Refuses new writes, commits the ones already queued, and returns when the last has been
    /// answered (the writer then holds nothing).
    func stop() async {
        let rounds = queue.withLock { queue in
            queue.stopping = true
            return queue.rounds
        }
        await rounds?.value
    }

    /// Commit rounds while writes wait, each after a pause for more writes when the group is not full.
    private func runRounds() async {
        while true {
            if let maxWait {
                let pause = Pause()
                let full = queue.withLock { queue in
                    queue.pause = pause
                    return queue.pending.count >= maxBatch || queue.stopping
                }
                if full { pause.end() }
                await pause.wait(nanoseconds: maxWait, on: executor)
            }
            if let commitTurns {
                guard await commitTurns.withCommitTurn({ await round() }) else { return }
            } else {
                guard await round() else { return }
            }
        }
    }

    /// One group commit of the writes waiting.
    /// - Returns: whether writes remain queued after it (a round must follow); when none remain, the
    ///   rounds' task ends.
    private func round() async -> Bool {
        let batch = queue.withLock { queue -> [Job] in
            queue.pause = nil
            let batch = Array(queue.pending.prefix(maxBatch))
            queue.pending.removeFirst(batch.count)
            return batch
        }
        let live = started(batch)
        if !live.isEmpty { await commitInTurns(live) }
        return queue.withLock { queue in
            guard queue.pending.isEmpty else { return true }
            queue.scheduled = false
            queue.rounds = nil
            return false
        }
    }

    /// A round's writes in turns, in order: each update awaited alone; each run of sends one update
    /// of the facade's. A part whose commit fails
    /// fails its own writes only.
    private func commitInTurns(_ jobs: [Job]) async {
        var failures = [ServiceError?](repeating: nil, count: jobs.count)
        var start = 0
        while start < jobs.count {
            let kind = jobs[start].work.kind
            var end = start + 1
            while end < jobs.count && jobs[end].work.kind == kind { end += 1 }
            let part = Array(jobs[start..<end])
            do {
                switch kind {
                case .update:
                    for job in part { if case .update(let run) = job.work { await run() } }
                case .send:
                    var messages: [PushFacade.PreparedMessage] = []
                    var keeps: [(Result<PushFacade.SendOutcome, any Error>) -> Void] = []
                    messages.reserveCapacity(part.count)
                    keeps.reserveCapacity(part.count)
                    for job in part {
                        guard case .send(let message, let keep) = job.work else { continue }
                        messages.append(message)
                        keeps.append(keep)
                    }
                    for (keep, result) in zip(keeps, try await facade.send(messages)) { keep(result) }
                }
            } catch {
                observer.failed(error)
                for index in start..<end { failures[index] = ServiceError.store(error) }
            }
            start = end
        }
        // Counted before anyone is answered, so metrics never lag behind a reply.
        observer.committed(jobs.count, queue.withLock { $0.pending.count })
        for (job, failure) in zip(jobs, failures) { job.finish(failure) }
    }

    /// The jobs of `batch` still to run, each moved into its commit: those that waited past the timeout
    /// are answered ``ServiceError/busy``, those whose deadline answered them are left.
    private func started(_ batch: [Job]) -> [Job] {
        let now = ContinuousClock.now
        var live: [Job] = []
        live.reserveCapacity(batch.count)
        for job in batch {
            if now - job.enqueued > timeout { job.finish(.busy) } else if job.state.start() { live.append(job) }
        }
        return live
    }
}

/// A writer's pause for more writes: ended by its timer (a dispatch timer, not the cooperative pool's)
/// or early, by a full group; whichever comes first resumes the round, once.
final class Pause: Sendable {
    private enum State {
        case notWaiting
        case waiting(CheckedContinuation<Void, Never>)
        case ended
    }
    private let state = Mutex(State.notWaiting)

    /// Waits until ``end()`` or `nanoseconds` from now, whichever is first.
    func wait(nanoseconds: Int64, on queue: DispatchQueue) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state in
                if case .ended = state { return true }
                state = .waiting(continuation)
                return false
            }
            if ended { return continuation.resume() }
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { self.end() }
        }
    }

    /// Ends the pause (again: nothing).
    func end() {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .ended }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiting?.resume()
    }
}

/// The queues a service's writers run their rounds on: as many serial queues as the machine has cores
/// (at least two), each writer given one in turn. A round holds its queue only while it decides; a
/// synchronous store's transaction runs on the writer's own queue, and a store over the network is
/// awaited: 8 or 800 busy apps need no thread each.
final class WriterQueues: Sendable {
    private let executors: [QueueTaskExecutor]
    private let turn = Atomic<Int>(0)

    init(count: Int = ProcessInfo.processInfo.activeProcessorCount) {
        executors = (0..<max(2, count)).map { QueueTaskExecutor(DispatchQueue(label: "pushbridge-writers-\($0)")) }
    }

    /// The queue for the next writer.
    func next() -> QueueTaskExecutor {
        executors[turn.add(1, ordering: .relaxed).oldValue % executors.count]
    }
}
