import PushBridgeStore

/// A facade operation as read → decide → commit: what it reads, and what it makes of what was read
/// (a pure function of the snapshot), run as the store's update (`PushStateStore.update(reading:deciding:)`).
typealias PlannedUpdate = StateUpdate

extension PushFacade {
    /// Runs `planned` as the store's update, awaited.
    /// - Parameter planned: the update.
    func update<Outcome>(_ planned: PlannedUpdate<Outcome>) async throws -> Outcome {
        try await store.update(reading: planned.keys, deciding: planned.decide)
    }
}
