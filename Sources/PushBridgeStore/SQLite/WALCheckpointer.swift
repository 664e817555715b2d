import CSQLite
import Foundation

/// Checkpoints a database's WAL on a thread of its own, so that the commit that fills the WAL past
/// a threshold does not also copy it into the database file: SQLite's automatic checkpoint runs
/// inside that commit (≈ 35 ms of a 100,000-member group's send, measured here).
///
/// The writer connection's WAL hook asks for a checkpoint after any commit that leaves at least
/// ``pages`` pages in the WAL (this replaces SQLite's automatic checkpoint on that connection). The
/// thread then runs a `PASSIVE` checkpoint on a connection of its own: it never waits for a reader
/// or the writer, and copies what no reader still needs. Requests made while one runs become one.
/// A checkpoint that fails or stops short (another process checkpointing, a long reader) is done
/// again at the next request; the WAL keeps every commit meanwhile, so durability is SQLite's own.
final class WALCheckpointer: @unchecked Sendable {
    /// The WAL size, in pages, from which a commit asks for a checkpoint.
    let pages: Int32
    private let connection: SQLiteConnection
    private let condition = NSCondition()
    private var requested = false
    private var stopping = false
    private var stopped = false
    private var completed = 0

    /// Opens the checkpointer's own connection and starts its thread.
    /// - Parameters:
    ///   - path: the database file.
    ///   - pages: the WAL size that asks for a checkpoint.
    init(path: String, pages: Int32) throws {
        self.pages = pages
        connection = try SQLiteConnection(path: path)
        // A connection learns that the database is in WAL mode when it first reads it; until
        // then a checkpoint on it does nothing.
        try connection.execute("SELECT count(*) FROM sqlite_master")
        let thread = Thread { [self] in run() }
        thread.name = "pushbridge-wal-checkpoint"
        thread.start()
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

    /// How many checkpoints the thread has completed (diagnostics).
    var checkpointsCompleted: Int { condition.withLock { completed } }

    /// Asks for a checkpoint (returns at once).
    func request() {
        condition.withLock {
            requested = true
            condition.signal()
        }
    }

    /// Stops the thread after the checkpoint it is running, if any, and waits for it.
    func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
            while !stopped { condition.wait() }
        }
    }

    private func run() {
        while true {
            let go: Bool = condition.withLock {
                while !requested && !stopping { condition.wait() }
                requested = false
                return !stopping
            }
            guard go else { break }
            var logged: Int32 = 0
            var copied: Int32 = 0
            let rc = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied)
            if rc == SQLITE_OK && logged >= 0 { condition.withLock { completed += 1 } }
        }
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }
}
