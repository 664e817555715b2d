import PushBridgeCore
import PushBridgeStore

// Push tasks (campaigns): a vendor request that pushes to the users of some labels or tags, or of the app,
// stored when accepted and decided a page of receivers at a time by the service's task runner. Each
// receiver's push is a message whose id names the task and the receiver, so a page decided again
// (a node that died before it recorded the page, two nodes on one task) is answered from the
// records: no receiver is pushed twice.
extension PushFacade {
    /// Why a task call was refused.
    public struct TaskRefusal: Error, Hashable, Sendable, CustomStringConvertible {
        private enum Reason: Hashable, Sendable {
            case tooManyTasks(limit: Int, seconds: Int64)
            case unknownTask
        }
        private let reason: Reason
        /// The task id the call named (0 for a new task).
        public let task: Int64

        /// The app has `limit` tasks pending or created within `seconds`.
        public static func tooManyTasks(limit: Int, seconds: Int64) -> Self { Self(reason: .tooManyTasks(limit: limit, seconds: seconds), task: 0) }
        /// No task has this id.
        public static func unknownTask(_ id: Int64) -> Self { Self(reason: .unknownTask, task: id) }

        public var isUnknownTask: Bool { reason == .unknownTask }

        public var description: String {
            switch reason {
            case .tooManyTasks(let limit, let seconds): "at most \(limit) push tasks at a time, and \(limit) in \(seconds / 60) minutes"
            case .unknownTask: "no push task \(task)"
            }
        }
    }

    /// A task and its deliveries so far, counted by state.
    public struct TaskStatus: Hashable, Sendable {
        public var task: PushTask
        public var deliveries: OutboxCounts
    }

    /// Stores a new task: fewer than `limit` tasks may be pending or have been created within
    /// `windowSeconds` before it, and with `labelNames` its labels must exist.
    /// - Parameters:
    ///   - task: the task (pending, nothing decided).
    ///   - labelNames: its labels' names as the request gave them (for the refusal), in the order of
    ///     `TaskAudience.labels`; `nil`: labels need not exist (a tag nobody has pushes to nobody).
    ///   - limit: the most tasks pending or created within the window.
    ///   - windowSeconds: the window.
    /// - Throws: ``LabelRefusal`` for an unknown label, ``TaskRefusal`` past the limit.
    public func createTask(_ task: PushTask, labelNames: [String]?, limit: Int, windowSeconds: Int64) async throws -> PushTask {
        var keys = StateKeys()
        let named = labelNames == nil ? [] : task.audience.labels
        let labels = named.map { keys.addLabel($0) }
        let pending = keys.addTasks(.pending)
        let recent = keys.addTasks(.createdSince(task.createdAt.adding(seconds: -windowSeconds)))
        return try await update(
            PlannedUpdate(keys: keys) { snapshot in
                for (i, position) in labels.enumerated() where snapshot.labels[position] == nil {
                    throw LabelRefusal.unknownLabel(i < (labelNames?.count ?? 0) ? labelNames![i] : named[i])
                }
                let counted = Set(snapshot.tasks[pending].map(\.id)).union(snapshot.tasks[recent].map(\.id))
                guard counted.count < limit else { throw TaskRefusal.tooManyTasks(limit: limit, seconds: windowSeconds) }
                return (StateChanges(tasks: [task]), task)
            })
    }

    /// A task and its deliveries counted, or `nil`.
    public func taskStatus(_ id: Int64) async throws -> TaskStatus? {
        var keys = StateKeys()
        let task = keys.addTasks(.task(id))
        let counts = keys.addDeliveryCounts(ofMessagesStartingWith: PushTask.messagePrefix(of: id))
        let snapshot = try await store.snapshot(keys)
        return snapshot.tasks[task].first.map { TaskStatus(task: $0, deliveries: snapshot.deliveryCounts[counts]) }
    }

    /// Tasks, newest first, at most `limit`; or every pending task, by id.
    public func tasks(_ query: TaskQuery) async throws -> [PushTask] {
        var keys = StateKeys()
        let position = keys.addTasks(query)
        return try await store.snapshot(keys).tasks[position]
    }

    /// Cancels a pending task: no further receiver is decided (pushes queued already are delivered).
    /// A task that ended is left as it is.
    /// - Returns: the task as it is now.
    /// - Throws: ``TaskRefusal`` for an unknown task.
    public func cancelTask(_ id: Int64, at now: Instant) async throws -> PushTask {
        var keys = StateKeys()
        let position = keys.addTasks(.task(id))
        return try await update(
            PlannedUpdate(keys: keys) { snapshot in
                guard var task = snapshot.tasks[position].first else { throw TaskRefusal.unknownTask(id) }
                guard task.state == .pending else { return (StateChanges(), task) }
                task.state = .cancelled
                task.endedAt = now
                return (StateChanges(tasks: [task]), task)
            })
    }

    /// A pending task's next receivers after its cursor, in code-point order, at most `limit`; `nil`
    /// when the task is not pending.
    public func nextReceivers(of id: Int64, limit: Int) async throws -> (task: PushTask, receivers: [UserID])? {
        guard let task = try await tasks(.task(id)).first else { return nil }
        return try await nextReceivers(after: task, limit: limit)
    }

    /// A pending task's next receivers, read after the cursor of `task` as a runner last saw it, in
    /// one read with the task: the task as it is now and the page, when its cursor is still that one;
    /// when it moved (another runner recorded a page), read again after the new cursor. `nil` when
    /// the task is not pending.
    public func nextReceivers(after task: PushTask, limit: Int) async throws -> (task: PushTask, receivers: [UserID])? {
        var seen = task
        for _ in 0..<8 {
            guard seen.state == .pending else { return nil }
            var keys = StateKeys()
            let again = keys.addTasks(.task(seen.id))
            let page = keys.addPage(.audience(seen.audience, after: seen.cursor, limit: limit))
            let snapshot = try await store.snapshot(keys)
            guard let now = snapshot.tasks[again].first else { return nil }
            if now.state == .pending && now.cursor == seen.cursor { return (now, snapshot.labelPages[page].users.map(\.user)) }
            seen = now
        }
        return nil
    }

    /// A task's receivers after `cursor`, in code-point order, at most `limit`: a page read ahead of its
    /// turn, while the page before it is written. The task is not read again here:
    /// ``sendPage(of:from:receivers:sending:finished:at:)`` writes the page only while the task's cursor
    /// is still `cursor`.
    /// - Parameters:
    ///   - task: the task whose audience is read.
    ///   - cursor: the receiver the page follows (`nil`: from the first).
    ///   - limit: the most receivers.
    public func receivers(of task: PushTask, after cursor: UserID?, limit: Int) async throws -> [UserID] {
        var keys = StateKeys()
        let page = keys.addPage(.audience(task.audience, after: cursor, limit: limit))
        return try await store.snapshot(keys).labelPages[page].users.map(\.user)
    }

    /// What ``sendPage(of:from:receivers:sending:finished:at:)`` did with a page it recorded.
    public struct SentPage: Sendable {
        /// The page's counts, added to the task's progress.
        public var progress: TaskProgress
        /// Each sent message's position in the page's batch and its outcome, in batch order.
        public var sent: [(index: Int, outcome: SendOutcome)]
        /// The task as recorded.
        public var task: PushTask
    }

    /// The receivers of each update a page is written in, on a store that lets requests' writes in
    /// between (`PushStateStore.interleavesBackgroundUpdates`): a request arriving during a page
    /// waits for about a millisecond of it, not for the whole page.
    public static let pagePartReceivers = 50

    /// Decides a page of a task and records it: its messages are sent — a message to a receiver
    /// deleted since the page was read is left out and counted `unknown-user` — the task's cursor
    /// moves from `cursor` to the page's last receiver and its progress grows; it finishes when
    /// `finished`. Written only while the task is pending with that cursor still: otherwise nothing
    /// is sent or written (another runner had the page, or the task ended). Nobody waits for it: a
    /// store that orders its writes runs requests' writes first, and where they can come between
    /// updates the page is written in parts of ``pagePartReceivers``, each its own update recording the
    /// task's cursor at its last receiver (`PushStateStore.backgroundUpdates(_:)`); a part that finds
    /// the task moved (cancelled meanwhile) writes nothing, nor do the parts after it.
    /// - Parameters:
    ///   - id: the task.
    ///   - cursor: the task's cursor the page was read after.
    ///   - receivers: the page's receivers, in the order read.
    ///   - batch: the receivers' messages (``prepare(_:dialect:now:profile:sender:pointer:)``), in the
    ///     receivers' order, each with its receiver as its one required target.
    ///   - finished: whether this is the task's last page.
    ///   - now: when the page is recorded.
    /// - Returns: what the page's recorded parts did, or `nil` when none was recorded.
    public func sendPage(
        of id: Int64, from cursor: UserID?, receivers: [UserID], sending batch: [PreparedMessage], finished: Bool, at now: Instant
    ) async throws -> SentPage? {
        let size = store.interleavesBackgroundUpdates ? Self.pagePartReceivers : max(1, receivers.count)
        var parts: [PlannedUpdate<SentPage?>] = []
        var (start, message) = (0, 0)
        var partCursor = cursor
        repeat {
            let end = min(receivers.count, start + size)
            let part = Array(receivers[start..<end])
            // The part's messages: those whose receiver is in it (a batch is in receiver order).
            let names = Set(part)
            let first = message
            while message < batch.count && (end == receivers.count || batch[message].requiredTargets.first.map { names.contains($0.id) } ?? true) {
                message += 1
            }
            parts.append(sendingPart(of: id, from: partCursor, receivers: part, sending: Array(batch[first..<message]), offset: first,
                finished: finished && end == receivers.count, at: now))
            partCursor = part.last ?? partCursor
            start = end
        } while start < receivers.count
        var page: SentPage?
        for outcome in try await store.backgroundUpdates(parts) {
            guard let part = outcome else { break }  // not recorded: neither is what follows it
            guard var sum = page else {
                page = part
                continue
            }
            sum.progress.add(part.progress)
            sum.sent += part.sent
            sum.task = part.task
            page = sum
        }
        return page
    }

    /// One part of a page as its own update (``sendPage(of:from:receivers:sending:finished:at:)``).
    /// - Parameter offset: the part's first message's position in the page's batch.
    private func sendingPart(
        of id: Int64, from cursor: UserID?, receivers: [UserID], sending batch: [PreparedMessage], offset: Int, finished: Bool, at now: Instant
    ) -> PlannedUpdate<SentPage?> {
        let send = sending(batch)
        var keys = send.keys
        let position = keys.addTasks(.task(id))
        return PlannedUpdate(keys: keys) { snapshot in
            guard var task = snapshot.tasks[position].first, task.state == .pending, task.cursor == cursor else { return (StateChanges(), nil) }
            var (changes, results) = try send.decide(snapshot)
            var page = SentPage(progress: TaskProgress(targets: receivers.count), sent: [], task: task)
            var unknown: Set<String> = []
            for (index, result) in results.enumerated() {
                switch result {
                case .success(let outcome):
                    page.sent.append((offset + index, outcome))
                    for item in outcome.decisions {
                        switch item.fanOut {
                        case .push: page.progress.pushed += 1
                        case .suppressed(let reason): page.progress.suppressed[reason.rawValue, default: 0] += 1
                        }
                    }
                case .failure(let refusal as UnknownTargets): unknown.formUnion(refusal.targets)
                case .failure(let error): throw error
                }
            }
            if !unknown.isEmpty { page.progress.suppressed["unknown-user", default: 0] += unknown.count }
            task.record(page: page.progress, to: receivers.last, finished: finished, at: now)
            changes.tasks.append(task)
            page.task = task
            return (changes, page)
        }
    }

    /// Records a page of a task: its cursor moves from `cursor` to `last`, its progress grows, and it
    /// finishes when `finished`. Written only when the task is pending with that cursor still.
    /// - Returns: whether it was written (`false`: another runner recorded the page, or the task ended).
    public func recordPage(of id: Int64, from cursor: UserID?, to last: UserID?, adding progress: TaskProgress, finished: Bool, at now: Instant) async throws -> Bool {
        var keys = StateKeys()
        let position = keys.addTasks(.task(id))
        return try await update(
            PlannedUpdate(keys: keys) { snapshot in
                guard var task = snapshot.tasks[position].first, task.state == .pending, task.cursor == cursor else { return (StateChanges(), false) }
                task.record(page: progress, to: last, finished: finished, at: now)
                return (StateChanges(tasks: [task]), true)
            })
    }
}
