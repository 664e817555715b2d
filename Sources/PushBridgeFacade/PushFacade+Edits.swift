import PushBridgeCore
import PushBridgeStore

// Several changes decided from one read and committed together: a server request's edit.
extension PushFacade {
    /// Reads what `scope` names, runs `body` on it (every change it makes is a value until it
    /// returns), and commits the changes in one write transaction: all of them, or (`body` throws)
    /// none.
    /// - Parameters:
    ///   - scope: what the edit reads; anything else it asks for throws ``StateEdit/NotRead``.
    ///   - body: the edit: a pure function of what was read, and may run more than once.
    /// - Returns: what `body` returned.
    public func edit<T: Sendable>(_ scope: EditScope, _ body: @escaping @Sendable (inout StateEdit) throws -> T) async throws -> T {
        try await update(editing(scope, body))
    }

    /// An edit as a planned update. Pure.
    func editing<T>(_ scope: EditScope, _ body: @escaping @Sendable (inout StateEdit) throws -> T) -> PlannedUpdate<T> {
        var keys = StateKeys()
        let positions = EditKeys(scope, into: &keys)
        let registry = registry
        return PlannedUpdate(keys: keys) { snapshot in
            var edit = StateEdit(keys: positions, snapshot: snapshot, registry: registry)
            let outcome = try body(&edit)
            return (edit.changes, outcome)
        }
    }
}
