import PushBridgeStore

/// A facade operation as read → decide → commit: what it reads, and what it makes of what was read
/// (a pure function of the snapshot), run as the store's update (`PushStateStore.update(reading:deciding:)`).
typealias PlannedUpdate = StateUpdate

extension PushFacade {
    /// Runs `planned` as the store's update, awaited.
    /// - Parameters:
    ///   - planned: the update.
    ///   - background: whether nobody waits for it (`PushStateStore.backgroundUpdate(reading:deciding:)`).
    func update<Outcome>(_ planned: PlannedUpdate<Outcome>, background: Bool = false) async throws -> Outcome {
        background
            ? try await store.backgroundUpdate(reading: planned.keys, deciding: planned.decide)
            : try await store.update(reading: planned.keys, deciding: planned.decide)
    }
}
