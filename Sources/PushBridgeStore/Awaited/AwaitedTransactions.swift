/// A store's transactions as calls that hold no thread while the store answers (PostgreSQL's: every
/// statement awaited). A store without them (SQLite, memory) runs its synchronous transactions on a
/// thread of the caller's choosing, as ``PushStateStore/awaitedTransactions`` says by being `nil`.
///
/// Each call runs `body` — facade calls, as a request makes them — against the store it is given, in
/// one transaction. `body` may run more than once (a store over the network runs it again after each
/// statement it sends), so it must have no effect but through that store, and keep its results only
/// until the call returns.
public protocol AwaitedTransactions: Sendable {
    /// Runs `body` on one consistent snapshot; changes are not allowed (they throw).
    /// - Parameter body: reads through the store it is given.
    func read<T>(_ body: (any PushStateStore) throws -> T) async throws -> T

    /// Runs `body` in one write transaction: all of its writes are kept, or (when it throws) none.
    /// - Parameter body: reads and writes through the store it is given.
    func write<T>(_ body: (any PushStateStore) throws -> T) async throws -> T
}
