/// A store whose commits share round trips with other stores' (several apps' commits in one
/// statement): it runs a writer's next group at the group's turn.
///
/// A writer that groups its app's work runs each group through ``withCommitTurn(_:)``: the group is
/// taken when the shared round trip in flight has ended, so what arrives meanwhile joins it, and the
/// apps whose groups were taken together commit together. A store without shared round trips has no
/// reason to conform.
public protocol CommitTurns: Sendable {
    /// Runs `group` (which takes the writer's waiting work and commits it) at its turn.
    /// - Parameter group: the writer's round.
    func withCommitTurn<T: Sendable>(_ group: () async throws -> T) async rethrows -> T
}
