import Foundation
import Logging
import PushBridgeStore

/// The vendor credentials the apps answer the vendors' REST with (Specification §12), by vendor and the key
/// the vendor's requests name (`org/app`, the SDKAppID): read from the directory, changed through
/// it. On a shared directory (PostgreSQL) a binding another node made is read on the first miss.
final class VendorBindings: @unchecked Sendable {
    private let directory: any AppDirectory
    private let isShared: Bool
    private let changes: DirectoryChanges
    private let logger: Logger
    private let lock = NSLock()
    private var bindings: [VendorBinding.Vendor: [String: VendorBinding]] = [:]
    private let reloads = DirectoryReloads()

    /// Reads the directory's bindings when it is a local one; a shared one is read by ``load()`` and on misses.
    /// - Parameters:
    ///   - directory: the storage's directory.
    ///   - isShared: whether other nodes change it too.
    ///   - changes: where binding and unbinding run.
    ///   - logger: the service's log.
    /// - Throws: `StoreError` when the directory cannot be read for another reason than being unreachable.
    init(directory: any AppDirectory, isShared: Bool, changes: DirectoryChanges, logger: Logger) throws {
        self.directory = directory
        // A directory it cannot read whole now (not a local one) is read as a shared one is.
        let local = isShared ? nil : directory as? any LocalAppDirectory
        self.isShared = local == nil
        self.changes = changes
        self.logger = logger
        if let local { bindings = Self.indexed(try local.vendorBindings()) }
    }

    /// Reads a shared directory's bindings, awaited (one that cannot be reached now is read on the
    /// first miss after; KnownApps logs the unreachable directory once).
    func load() async {
        guard isShared else { return }
        await readAll(failure: nil)
    }

    /// The binding the vendor's requests name (`org/app`, or the SDKAppID).
    func binding(_ vendor: VendorBinding.Vendor, key: String) async -> VendorBinding? {
        if let found = lock.withLock({ bindings[vendor]?[key] }) { return found }
        await refreshShared()
        return lock.withLock { bindings[vendor]?[key] }
    }

    /// An app's bindings, one a vendor at most, in the vendors' order (by name).
    func bindings(of app: String) -> [VendorBinding] {
        lock.withLock { bindings.keys.sorted().compactMap { vendor in bindings[vendor]?.values.first { $0.app == app } } }
    }

    /// Binds vendor credentials to an app (replacing its earlier binding for the vendor).
    /// - Returns: `false` when another app holds the key.
    func bind(_ binding: VendorBinding) async throws -> Bool {
        try await changes.run { [self] in
            guard try await directory.bind(binding) else { return false }
            lock.withLock {
                bindings[binding.vendor] = (bindings[binding.vendor] ?? [:]).filter { $0.value.app != binding.app }
                bindings[binding.vendor, default: [:]][binding.key] = binding
            }
            return true
        }
    }

    /// Removes an app's binding for a vendor.
    /// - Returns: `false` when the app had none.
    func unbind(app: String, vendor: VendorBinding.Vendor) async throws -> Bool {
        try await changes.run { [self] in
            guard try await directory.unbind(app: app, vendor: vendor) else { return false }
            lock.withLock { bindings[vendor] = bindings[vendor]?.filter { $0.value.app != app } }
            return true
        }
    }

    /// On a shared directory, re-reads the bindings another node may have changed: called on a
    /// miss, at most once a second, awaited with no lock held.
    private func refreshShared() async {
        guard isShared, reloads.isDue() else { return }
        await readAll(failure: "reading the shared vendor bindings failed")
    }

    /// Reads every binding of the directory, awaited, in place of those known; a failure is logged
    /// as `failure` (`nil`: not logged).
    private func readAll(failure: String?) async {
        do {
            let fresh = Self.indexed(try await directory.vendorBindings())
            lock.withLock { bindings = fresh }
        } catch {
            if let failure { logger.warning("\(failure)", metadata: ["error": "\(error)"]) }
        }
    }

    /// Bindings by vendor and key.
    private static func indexed(_ list: [VendorBinding]) -> [VendorBinding.Vendor: [String: VendorBinding]] {
        var index: [VendorBinding.Vendor: [String: VendorBinding]] = [:]
        for binding in list { index[binding.vendor, default: [:]][binding.key] = binding }
        return index
    }
}
