import Foundation
import Synchronization
import PushBridgeFacade
import PushBridgeStore

/// One app store's writer: a thread of its own that takes the writes of concurrent requests and
/// commits them together (``PushStateStore/writeGroup(_:)``), each in its own savepoint.
///
/// Sends that follow one another in a group are decided as one facade batch
/// (``PushFacade/send(_:)-([PreparedMessage])``): one savepoint for all of them, and their counters,
/// outbox rows and records written together.
///
/// A write waits at most the request timeout for its turn: one that waited longer is answered
/// ``ServiceError/busy`` and never run, so a client that got no 2xx can retry without a double.
/// Requests only reach the writer with their whole body read, so a slow client never holds it.
final class GroupCommitWriter: @unchecked Sendable {
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
        /// Runs the write; keeps its own result.
        case write((any PushStateStore) -> Void)
        /// A message to send; keeps its own result.
        case send(PushFacade.PreparedMessage, (Result<PushFacade.SendOutcome, any Error>) -> Void)
    }

    /// Sends a run of messages through the store given (a group's savepoint store).
    typealias SendBatch = @Sendable (any PushStateStore, [PushFacade.PreparedMessage]) throws -> [Result<PushFacade.SendOutcome, any Error>]

    /// What the writer reports after each commit: the group size and the writes still waiting; and
    /// why a commit failed (its answers say only "store failure": the details go to the log).
    struct Observer: Sendable {
        var committed: @Sendable (_ batch: Int, _ waiting: Int) -> Void = { _, _ in }
        var failed: @Sendable (any Error) -> Void = { _ in }
    }

    private let store: any PushStateStore
    private let sendBatch: SendBatch
    private let maxBatch: Int
    private let maxWait: Double
    private let timeout: Duration
    /// Whether a request stops waiting at `timeout` even while its commit runs (a store that can stop
    /// answering: PostgreSQL). Without it, a commit that began is waited for (a local file always answers).
    private let answersByDeadline: Bool
    private let observer: Observer
    private let condition = NSCondition()
    private var pending: [Job] = []
    private var stopping = false
    private let stopped = DispatchSemaphore(value: 0)

    /// Starts the writer thread.
    /// - Parameters:
    ///   - store: the app's store.
    ///   - sendBatch: sends a run of messages (the app's facade over the store it is given).
    ///   - maxBatch: the most writes per commit.
    ///   - maxWaitMicroseconds: how long to wait for more writes when the group is not full.
    ///   - timeout: the longest a write may wait for its turn.
    ///   - answersByDeadline: whether every write is answered by `timeout` even when its commit has
    ///     not ended (``ServiceError/storeTimedOut``): for a store over the network.
    ///   - name: the thread's name.
    ///   - observer: told about each commit (metrics).
    init(
        store: any PushStateStore, sendBatch: @escaping SendBatch, maxBatch: Int, maxWaitMicroseconds: Int, timeout: Duration,
        answersByDeadline: Bool = false, name: String, observer: Observer = Observer()
    ) {
        self.store = store
        self.sendBatch = sendBatch
        self.maxBatch = max(1, maxBatch)
        self.maxWait = Double(maxWaitMicroseconds) / 1_000_000
        self.timeout = timeout
        self.answersByDeadline = answersByDeadline
        self.observer = observer
        let thread = Thread { [self] in loop() }
        thread.name = name
        thread.start()
    }

    /// Writes waiting for the writer.
    var depth: Int { condition.withLock { pending.count } }

    /// Runs `body` in the next group commit and returns its result once that commit is durable.
    /// - Parameter body: the write; it gets the store to write through. All its writes are one
    ///   savepoint: when it throws, none of them is kept.
    /// - Throws: what `body` threw (nothing of it was kept), or ``ServiceError`` when the commit
    ///   failed, the write waited too long or the service is stopping.
    func write<T: Sendable>(_ body: @escaping @Sendable (any PushStateStore) throws -> T) async throws -> T {
        try await submit { keep in .write { store in keep(Result { try store.atomically { try body($0) } }) } }
    }

    /// Sends a message in the next group commit, decided together with the sends next to it, and
    /// returns the outcome once that commit is durable.
    /// - Parameter message: the prepared message.
    /// - Throws: why the message failed (nothing of it was kept), or ``ServiceError`` as ``write(_:)``.
    func send(_ message: PushFacade.PreparedMessage) async throws -> PushFacade.SendOutcome {
        try await submit { keep in .send(message, keep) }
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
            condition.lock()
            guard !stopping else {
                condition.unlock()
                continuation.resume(throwing: ServiceError.stopping)
                return
            }
            pending.append(job)
            condition.signal()
            condition.unlock()
            guard answersByDeadline else { return }
            let deadline = DispatchTime.now() + .nanoseconds(Int(timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000))
            DispatchQueue.global().asyncAfter(deadline: deadline) {
                switch state.answer() {
                case .waiting: continuation.resume(throwing: ServiceError.busy)
                case .running: continuation.resume(throwing: ServiceError.storeTimedOut)
                case .answered: break
                }
            }
        }
    }

    /// Finishes the writes already queued, refuses new ones, and ends the thread.
    func stop() {
        condition.withLock {
            stopping = true
            condition.signal()
        }
        stopped.wait()
    }

    private func loop() {
        while true {
            condition.lock()
            while pending.isEmpty && !stopping { condition.wait() }
            if pending.isEmpty {
                condition.unlock()
                stopped.signal()
                return
            }
            if maxWait > 0 && pending.count < maxBatch && !stopping {
                _ = condition.wait(until: Date(timeIntervalSinceNow: maxWait))
            }
            let batch = Array(pending.prefix(maxBatch))
            pending.removeFirst(batch.count)
            let waiting = pending.count
            condition.unlock()

            let now = ContinuousClock.now
            var live: [Job] = []
            live.reserveCapacity(batch.count)
            for job in batch {
                if now - job.enqueued > timeout { job.finish(.busy) } else if job.state.start() { live.append(job) }
            }
            guard !live.isEmpty else { continue }
            var failure: ServiceError?
            do {
                try store.writeGroup(writers(live))
            } catch {
                observer.failed(error)
                failure = ServiceError.store(error)
            }
            // Counted before anyone is answered, so metrics never lag behind a reply.
            observer.committed(live.count, waiting)
            for job in live { job.finish(failure) }
        }
    }

    /// The group's writers, in order: each write alone, each run of sends as one batch.
    private func writers(_ jobs: [Job]) -> [(any PushStateStore) -> Void] {
        var writers: [(any PushStateStore) -> Void] = []
        var sends: [(PushFacade.PreparedMessage, (Result<PushFacade.SendOutcome, any Error>) -> Void)] = []
        func endRun() {
            guard !sends.isEmpty else { return }
            let run = sends
            sends = []
            writers.append { [sendBatch] store in
                let results: [Result<PushFacade.SendOutcome, any Error>]
                do {
                    results = try sendBatch(store, run.map(\.0))
                } catch {
                    results = Array(repeating: .failure(error), count: run.count)
                }
                for ((_, keep), result) in zip(run, results) { keep(result) }
            }
        }
        for job in jobs {
            switch job.work {
            case .write(let write):
                endRun()
                writers.append(write)
            case .send(let message, let keep):
                sends.append((message, keep))
            }
        }
        endRun()
        return writers
    }
}
