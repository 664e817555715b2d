import PostgresNIO
import PushBridgeStore

/// The statements one synchronous transaction body has sent, with their answers, so that the body
/// runs without a thread waiting for the server (issue 49).
///
/// A run of the body answers each statement it asks for from those sent so far, in order; the
/// first one not sent yet ends the run: ``answer(_:)`` throws ``Suspended``, and every statement
/// after it in the same run throws too (a caller's `try?` or `catch` cannot go on past it). The
/// driver (``PostgresStateStore/replaying(_:_:)``) then sends that statement, awaited, records its
/// answer (rows or error), and runs the body again from its start. Each statement is sent once,
/// in the order the body asks for it; a statement's error is thrown where the body asked for it.
///
/// A body run this way must ask for the same statements in the same order each time it runs, so
/// what it reads besides its statements must not change between runs: the transaction's context is
/// built afresh for each run, the store's shared caches are read as they were when the transaction
/// began, and what it would change of them is done after it commits. When a run asks for another
/// statement than the one sent at that place, ``answer(_:)`` throws ``Diverged`` and the driver
/// begins the whole transaction again.
final class StatementReplay {
    /// The statement a run asked for that was not sent yet: the run ends.
    struct Suspended: Error {}

    /// A run asked for another statement than the one sent at its place (what each began with; no parameter values).
    struct Diverged: Error, CustomStringConvertible {
        var sent = "", asked = ""
        var description: String { "a transaction's body asked for other statements when run again: sent \(sent), asked \(asked)" }
    }

    private var sent: [(query: PostgresQuery, answer: Result<[PostgresRow], any Error>)] = []
    private var position = 0
    /// The statement the current run is waiting for, if any.
    private(set) var wanted: PostgresQuery?
    /// How the current run asked for another statement than the one sent at its place, if it did.
    private(set) var divergence: Diverged?

    /// Starts a run: statements are answered from the first one sent.
    func rewind() {
        position = 0
        wanted = nil
        divergence = nil
    }

    /// The answer of the run's next statement; throws ``Suspended`` when it was not sent yet.
    func answer(_ query: PostgresQuery) throws -> [PostgresRow] {
        if let divergence { throw divergence }
        guard wanted == nil else { throw Suspended() }
        guard position < sent.count else {
            wanted = query
            throw Suspended()
        }
        guard sent[position].query == query else {
            let divergence = Diverged(sent: String(sent[position].query.sql.prefix(160)), asked: String(query.sql.prefix(160)))
            self.divergence = divergence
            throw divergence
        }
        position += 1
        return try sent[position - 1].answer.get()
    }

    /// Records what the server answered to ``wanted`` (its rows, or its error).
    func record(_ answer: Result<[PostgresRow], any Error>) {
        guard let wanted else { return }
        sent.append((wanted, answer))
        self.wanted = nil
    }
}

extension PostgresStateStore {
    /// Runs a synchronous body whose statements go to `session`, holding no thread while the server
    /// answers: each statement the body asks for that was not sent yet is sent, awaited, and the body
    /// runs again (``StatementReplay``).
    /// - Parameters:
    ///   - session: the connection; its statements are answered from the replay while `body` runs.
    ///   - body: the transaction's work; runs once per statement it sends, plus once.
    /// - Throws: what `body` throws on its last run; ``StatementReplay/Diverged`` when a run asked for
    ///   other statements than the one before it (the caller begins again).
    static func replaying<T>(_ session: PostgresSession, _ body: () throws -> T) async throws -> T {
        let replay = StatementReplay()
        session.replay = replay
        defer { session.replay = nil }
        while true {
            replay.rewind()
            let outcome = Result { try body() }
            // A writer may have caught the suspension (a group's writers keep their errors): the
            // replay, not the error, tells.
            if let wanted = replay.wanted {
                let answer: Result<[PostgresRow], any Error>
                do { answer = .success(try await session.query(wanted)) } catch { answer = .failure(error) }
                replay.record(answer)
                continue
            }
            if let divergence = replay.divergence { throw divergence }
            return try outcome.get()
        }
    }

    /// ``replaying(_:_:)`` with a transaction context made afresh for each run (a run's changes to
    /// its context are not seen by the next).
    /// - Parameters:
    ///   - session: the connection.
    ///   - context: makes a run's context.
    ///   - body: the transaction's work.
    /// - Returns: what `body` returned, and the context of its last run (what its commit keeps).
    static func replaying<T>(
        _ session: PostgresSession, context: () -> TransactionContext, _ body: (PostgresSession, TransactionContext) throws -> T
    ) async throws -> (T, TransactionContext?) {
        var last: TransactionContext?
        let result = try await replaying(session) {
            let fresh = context()
            last = fresh
            return try body(session, fresh)
        }
        return (result, last)
    }
}
