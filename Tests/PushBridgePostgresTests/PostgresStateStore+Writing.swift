@testable import PushBridgePostgres

extension PostgresStateStore {
    /// One write transaction of this node's turn (the writer gate, then the advisory lock), its
    /// statements awaited: the tables as the store's updates use them, written directly by a test.
    /// - Parameter body: reads and changes state through the transaction; a thrown error rolls it back.
    func writing<T>(_ body: (Transaction) async throws -> T) async throws -> T {
        await gate.enter()
        defer { gate.leave() }
        return try await inWriteTransaction(readingRecordsOf: []) { try await body($0) }
    }
}
