import Foundation
import PostgresNIO
import PushBridgeStore
import Synchronization

/// The one-round-trip commits of a node's apps on one database, sent together (many apps cost what one
/// costs). While ``inFlightLimit`` statements are in flight, commits that arrive wait;
/// the next statement carries all that waited (at most ``batchLimit``, an app's once) — one
/// transaction, one call a schema taking its apps' locks in order (``CommitScope``), so that two
/// statements never take two apps' locks in opposite orders: `pushbridge_commit_apps` for several
/// apps (each checked as it would be alone, the outbox rows and records of those that pass written
/// together), `pushbridge_commit_logged` for one. When the statement fails with an error of
/// PostgreSQL's (not a lost connection), each commit is sent again alone, so that one app's failure
/// fails no other. (A commit whose statement was lost with its connection may have been written:
/// when its group runs again, its check finds the change.)
///
/// Writers take their groups at their turns (``nextTurn(scope:)``): a writer that finds a statement in
/// flight waits for its end, and takes what queued meanwhile; the statement after it waits for the
/// commits of the writers its end woke (at most ``holdMilliseconds``), so that they go together.
final class PostgresCommitCombiner: Sendable {
    /// What one app's commit answered: whether it committed, the data version after it, the badge log
    /// row it wrote, and the rows other nodes appended to the log since its decision, in order.
    struct Answer: Sendable {
        var committed: Bool
        var dataVersion: Int64
        var logRow: Int64?
        var appended: [BadgeLogRow] = []
    }

    /// A waiting commit's turn: answered by another's statement, or handed the batch to send.
    private enum Turn {
        case answered(Answer)
        case send([Waiting])
    }

    private struct Waiting: @unchecked Sendable {
        let id: Int
        let scope: CommitScope
        let commit: KeptDataCommit
        /// `nil` for the commit of the task that sends the statement.
        let continuation: CheckedContinuation<Turn, any Error>?
    }

    private struct State {
        var waiting: [Waiting] = []
        var inFlight = 0
        var nextID = 0
        /// Writers waiting for the statement in flight to end before they take their next group.
        var turns: [(scope: CommitScope, continuation: CheckedContinuation<Void, Never>)] = []
        /// The apps whose writers a statement's end woke: the next statement waits for their commits
        /// (or for them to pass) at most ``holdMilliseconds``.
        var expected: Set<CommitScope> = []
        /// Which hold the timer of ``expected`` ends.
        var hold = 0
    }

    /// Statements in flight at most (the others' commits wait for one to end). One: the commits that
    /// wait are decided, with the sends that joined them, when it ends (measured with 8 apps on one
    /// node, `PUSHBRIDGE_BENCH_ONLY=eight-apps`: one in flight 5,121–5,229 messages/s, 0.09 ms of
    /// PostgreSQL a message; two 4,115–4,119/s, 0.15 ms; three 3,132–3,859/s).
    let inFlightLimit: Int
    /// Commits in one statement at most.
    let batchLimit: Int
    private let state = Mutex(State())
    /// Statements sent, and commits they carried (their ratio is the batch).
    let statementCount = StatementCounter(), commitCount = StatementCounter()

    /// The longest the next statement waits for the commits of the writers a statement's end woke.
    let holdMilliseconds: Int

    init(inFlightLimit: Int = 1, batchLimit: Int = 16, holdMilliseconds: Int = 2) {
        self.holdMilliseconds = holdMilliseconds
        self.inFlightLimit = max(1, inFlightLimit)
        self.batchLimit = max(1, batchLimit)
    }

    /// Returns when no statement is in flight (at once when none is). The writer of `scope` takes its
    /// next group then: what arrived while the statement ran joins it, and the next statement waits
    /// for its commit (briefly: see ``holdMilliseconds``) so that the apps woken together commit together.
    /// - Parameter scope: the app.
    func nextTurn(scope: CommitScope) async {
        if state.withLock({ $0.inFlight < inFlightLimit }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.inFlight >= inFlightLimit else { return true }
                state.turns.append((scope, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Writers waiting for their turn now.
    var waitingTurns: Int { state.withLock { $0.turns.count } }

    /// The writer of `scope` ended the group it took at its turn: the next statement waits for it no
    /// longer (it committed through the lock, or had nothing to commit).
    func passTurn(scope: CommitScope) {
        let next = state.withLock { state -> [Waiting]? in
            guard state.expected.remove(scope) != nil else { return nil }
            return dispatch(&state)
        }
        if let next, let first = next.first { first.continuation?.resume(returning: .send(next)) }
    }

    /// Commits `commit` to the app of `scope` in the next statement and returns its answer. The
    /// caller whose commit finds a statement's place free sends it, with the commits waiting then;
    /// when it ends, the first commit of those that waited meanwhile is handed the next statement. No
    /// task or thread of its own: the senders are the writers' own tasks.
    /// - Parameters:
    ///   - commit: an update's sends decided on what the node keeps.
    ///   - scope: the app.
    ///   - pool: the node's connections to the database.
    func commit(_ commit: KeptDataCommit, scope: CommitScope, on pool: PostgresConnections) async throws -> Answer {
        // A statement's place free: this commit goes now, decided on the caller's task (no hop).
        let (id, free) = state.withLock { state in
            state.nextID += 1
            state.expected.remove(scope)
            guard state.inFlight < inFlightLimit, state.waiting.isEmpty, state.expected.isEmpty else { return (state.nextID, false) }
            state.inFlight += 1
            return (state.nextID, true)
        }
        let turn: Turn = free ? .send([Waiting(id: id, scope: scope, commit: commit, continuation: nil)]) : try await withCheckedThrowingContinuation { continuation in
            let batch: [Waiting]? = state.withLock { state in
                state.waiting.append(Waiting(id: id, scope: scope, commit: commit, continuation: continuation))
                return dispatch(&state)
            }
            if let batch { continuation.resume(returning: .send(batch)) }
        }
        switch turn {
        case .answered(let answer):
            return answer
        case .send(let batch):
            let results = await send(batch, on: pool)
            var mine: Result<Answer, any Error>?
            for (waiting, result) in zip(batch, results) {
                if waiting.id == id { mine = result } else { waiting.continuation?.resume(with: result.map(Turn.answered)) }
            }
            let (next, woken, hold): ([Waiting]?, [CheckedContinuation<Void, Never>], Int?) = state.withLock { state in
                state.inFlight -= 1
                let woken = state.turns
                state.turns.removeAll()
                var hold: Int?
                if !woken.isEmpty {
                    state.expected.formUnion(woken.map(\.scope))
                    state.hold += 1
                    hold = state.hold
                }
                return (dispatch(&state), woken.map(\.continuation), hold)
            }
            if let next, let first = next.first { first.continuation?.resume(returning: .send(next)) }
            for writer in woken { writer.resume() }
            if let hold { endHold(hold) }
            guard let mine else { throw StoreError(.postgres, "a commit was not in its own statement", context: "the commit statement") }
            return try mine.get()
        }
    }

    /// Ends hold `hold` after ``holdMilliseconds``, unless every commit it waited for came first.
    private func endHold(_ hold: Int) {
        DispatchQueue.storageTimers.asyncAfter(deadline: .now() + .milliseconds(holdMilliseconds)) { [self] in
            let next = state.withLock { state -> [Waiting]? in
                guard state.hold == hold, !state.expected.isEmpty else { return nil }
                state.expected.removeAll()
                return dispatch(&state)
            }
            if let next, let first = next.first { first.continuation?.resume(returning: .send(next)) }
        }
    }

    /// The next statement's commits, when a statement's place is free, commits wait and no woken
    /// writer's commit is still expected; the place is taken.
    private func dispatch(_ state: inout State) -> [Waiting]? {
        guard state.inFlight < inFlightLimit, !state.waiting.isEmpty, state.expected.isEmpty else { return nil }
        state.inFlight += 1
        return take(&state)
    }

    /// The waiting commits for one statement, each app's at most once (a second waits for the next
    /// statement: its check must see the first's writes), in the apps' order.
    private func take(_ state: inout State) -> [Waiting] {
        var batch: [Waiting] = [], scopes: Set<CommitScope> = [], left: [Waiting] = []
        for waiting in state.waiting {
            if batch.count < batchLimit, scopes.insert(waiting.scope).inserted { batch.append(waiting) } else { left.append(waiting) }
        }
        state.waiting = left
        return batch.sorted { $0.scope < $1.scope }
    }

    /// Each commit's answer: one statement for all; when PostgreSQL refuses it, one each.
    private func send(_ batch: [Waiting], on pool: PostgresConnections) async -> [Result<Answer, any Error>] {
        await send(batch.map { ($0.scope, $0.commit) }, on: pool)
    }

    /// Each decided commit's answer: one statement for all; when PostgreSQL refuses it, one each.
    private func send(_ commits: [(scope: CommitScope, commit: KeptDataCommit)], on pool: PostgresConnections) async -> [Result<Answer, any Error>] {
        do {
            return try await statement(commits, on: pool).map { .success($0) }
        } catch let error as StoreError where error.code == .postgres && commits.count > 1 {
            var results: [Result<Answer, any Error>] = []
            for commit in commits { results += await send([commit], on: pool) }
            return results
        } catch {
            return commits.map { _ in .failure(error) }
        }
    }

    /// One statement for `commits`: each app's function, its answer numbered by its place.
    private func statement(_ commits: [(scope: CommitScope, commit: KeptDataCommit)], on pool: PostgresConnections) async throws -> [Answer] {
        let query = Self.query(commits)
        statementCount.add()
        for _ in commits { commitCount.add() }
        let rows = try await pool.use(schema: nil) { session in try await session.query(query) }.map(Cells.init)
        return try Self.answers(rows, count: commits.count)
    }

    /// The statement calling a commit function once a schema with its apps' commits, its rows
    /// numbered by the commit's place.
    private static func query(_ commits: [(scope: CommitScope, commit: KeptDataCommit)]) -> PostgresQuery {
        var binds = PostgresBindings()
        var parts: [String] = []
        var start = 0
        while start < commits.count {
            let schema = commits[start].scope.schema
            var end = start + 1
            while end < commits.count && commits[end].scope.schema == schema { end += 1 }
            if end - start == 1 {  // one app's commit: the one-app function (cheaper alone: 200 against 250 µs a call)
                parts.append("SELECT \(start) AS n, c.* FROM \(commits[start].commit.call(scope: commits[start].scope, binds: &binds)) c")
            } else {
                let call = PostgresStateStore.commitCall(schema: schema, commits[start..<end].map { ($0.scope.app, $0.commit) }, binds: &binds)
                parts.append("SELECT c.n + \(start - 1) AS n, c.committed, c.data, c.log_id, c.entries FROM \(call) c")
            }
            start = end
        }
        return PostgresQuery(unsafeSQL: parts.joined(separator: " UNION ALL "), binds: binds)
    }

    /// Each commit's answer from the statement's rows.
    private static func answers(_ rows: [Cells], count: Int) throws -> [Answer] {
        var answers = [Answer?](repeating: nil, count: count)
        for row in rows {
            let n = try row.int(0)
            guard answers.indices.contains(n) else { continue }
            if row.isNull(1) {  // a row another node appended: after its commit's answer
                answers[n]?.appended.append(BadgeLogRow(id: try row.int64(3), entries: try row.row[4].decode(ByteBuffer.self)))
            } else {
                answers[n] = Answer(committed: try row.bool(1), dataVersion: try row.int64(2), logRow: try row.optionalInt64(3))
            }
        }
        return try answers.map { answer in
            guard let answer else { throw StoreError(.postgres, "a commit returned no row", context: "the commit statement") }
            return answer
        }
    }
}

/// An app whose commits the combiner sends: the schema of its tables and its key there. Commits go in
/// this order in a statement, so that two statements never take two apps' locks in opposite orders.
struct CommitScope: Hashable, Comparable, Sendable {
    let schema: String
    let app: Int32

    static func < (a: CommitScope, b: CommitScope) -> Bool { (a.schema, a.app) < (b.schema, b.app) }
}
