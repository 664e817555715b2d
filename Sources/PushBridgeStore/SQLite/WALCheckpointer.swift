import CSQLite
import Dispatch
import Foundation
import Synchronization

/// Checkpoints a database's WAL off the writer's commits, so that the commit that fills the WAL
/// past a threshold does not also copy it into the database file: SQLite's automatic checkpoint
/// runs inside that commit (≈ 35 ms of a 100,000-member group's send, measured here).
///
/// The writer connection's WAL hook asks for a checkpoint after any commit that leaves at least
/// ``pages`` pages in the WAL (this replaces SQLite's automatic checkpoint on that connection). A
/// serial queue of the checkpointer's own then runs a `PASSIVE` checkpoint on a connection of its
/// own: it never waits for a reader or the writer, and copies what no reader still needs. Requests
/// made while one is queued or running become one. The queue holds no thread while no checkpoint is
/// asked for, so an idle app costs none. A checkpoint that fails or stops short (another process
/// checkpointing, a long reader) is done again at the next request; the WAL keeps every commit
/// meanwhile, so durability is SQLite's own.
final class WALCheckpointer: Sendable {
    private struct State {
        var scheduled = false
        var stopping = false
        var completed = 0
    }

    /// The WAL size, in pages, from which a commit asks for a checkpoint.
    let pages: Int32
    private nonisolated(unsafe) let connection: SQLiteConnection
    private let queue = DispatchQueue(label: "pushbridge-wal-checkpoint")
    private let state = Mutex(State())

    /// Opens the checkpointer's own connection.
    /// - Parameters:
    ///   - path: the database file.
    ///   - pages: the WAL size that asks for a checkpoint.
    init(path: String, pages: Int32) throws {
        self.pages = pages
        connection = try SQLiteConnection(path: path)
        // A connection learns that the database is in WAL mode when it first reads it; until
        // then a checkpoint on it does nothing.
        try connection.execute("SELECT count(*) FROM sqlite_master")
    }

    /// Makes `writer`'s commits ask this checkpointer (instead of checkpointing themselves).
    /// - Parameter writer: the store's writer connection; ``detach(from:)`` before it or this goes.
    func attach(to writer: SQLiteConnection) {
        sqlite3_wal_hook(
            writer.handle,
            { context, _, _, walPages in
                guard let context else { return SQLITE_OK }
                let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
                if walPages >= checkpointer.pages { checkpointer.request() }
                return SQLITE_OK
            },
            Unmanaged.passUnretained(self).toOpaque())
    }

    /// Removes the hook from `writer`.
    func detach(from writer: SQLiteConnection) {
        sqlite3_wal_hook(writer.handle, nil, nil)
    }

    /// How many checkpoints have completed (diagnostics).
    var checkpointsCompleted: Int { state.withLock { $0.completed } }

    /// Asks for a checkpoint (returns at once; one already queued takes this request too).
    func request() {
        let schedule = state.withLock { state in
            guard !state.scheduled && !state.stopping else { return false }
            state.scheduled = true
            return true
        }
        guard schedule else { return }
        queue.async { [self] in
            guard state.withLock({ state in
                state.scheduled = false
                return !state.stopping
            }) else { return }
            var logged: Int32 = 0
            var copied: Int32 = 0
            let rc = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied)
            if rc == SQLITE_OK && logged >= 0 { state.withLock { $0.completed += 1 } }
        }
    }

    /// Refuses further requests and waits for the checkpoint running, if any.
    func stop() {
        state.withLock { $0.stopping = true }
        queue.sync {}
    }
}
