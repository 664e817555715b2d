import Foundation
import Logging
import PushBridgeStore

/// The apps this node knows — ids and key hashes, read from the directory — and what a bearer key
/// may do on each. On a shared directory (PostgreSQL) an app another node created is read on the
/// first miss.
final class KnownApps: @unchecked Sendable {
    /// Who a request's key says the caller is, for one app.
    enum Access: Equatable {
        case granted
        /// No key, or a key of no app (401).
        case unauthenticated
        /// A valid key, but not this app's (403).
        case forbidden
    }

    private let directory: any AppDirectory
    private let isShared: Bool
    private let adminKeyHash: [UInt8]?
    private let changes: DirectoryChanges
    private let logger: Logger
    private let lock = NSLock()
    private var known: [String: RegisteredApp] = [:]
    private let reloads = DirectoryReloads()

    /// Reads the directory's apps when it is a local one; a shared one (over the network, awaited) is
    /// read by ``load()`` and on misses.
    /// - Parameters:
    ///   - directory: the storage's directory.
    ///   - isShared: whether other nodes change it too.
    ///   - adminKeyHash: the admin key's hash, if any (it is no app's key: 403 on an app).
    ///   - changes: where creating an app runs.
    ///   - logger: the service's log.
    /// - Throws: `StoreError` when the directory cannot be read for another reason than being unreachable.
    init(directory: any AppDirectory, isShared: Bool, adminKeyHash: [UInt8]?, changes: DirectoryChanges, logger: Logger) throws {
        self.directory = directory
        // A directory it cannot read whole now (not a local one) is read as a shared one is.
        let local = isShared ? nil : directory as? any LocalAppDirectory
        self.isShared = local == nil
        self.adminKeyHash = adminKeyHash
        self.changes = changes
        self.logger = logger
        if let local { for app in try local.apps() { known[app.id] = app } }
    }

    /// Reads a shared directory's apps, awaited (a directory that cannot be reached now is read on
    /// the first miss after: a node may start while its database is down).
    func load() async {
        guard isShared else { return }
        await readAll(failure: "the app directory is unreachable; starting without it")
    }

    /// The ids of the apps known now.
    var ids: [String] { lock.withLock { Array(known.keys) } }

    /// Whether the app exists.
    /// - Throws: ``ServiceError/storeUnavailable`` when this node does not know the app and the shared
    ///   directory cannot be read (it may exist: the answer is 503, not 404).
    func exists(_ id: String) async throws -> Bool {
        if lock.withLock({ known[id] != nil }) { return true }
        guard let known = await lookUpShared(id) else { throw ServiceError.storeUnavailable }
        return known
    }

    /// What a bearer key may do on an app.
    func access(to id: String, key: String?) async -> Access {
        guard let key, !key.isEmpty else { return .unauthenticated }
        let hash = AccessKey.hash(key)
        let granted = { self.lock.withLock { self.known[id].map { AccessKey.matches($0.keyHash, hash) } ?? false } }
        if granted() { return .granted }
        if lock.withLock({ known[id] == nil }), await lookUpShared(id) == true, granted() { return .granted }
        await refreshShared()
        return lock.withLock {
            if let app = known[id], AccessKey.matches(app.keyHash, hash) { return .granted }
            if known.values.contains(where: { AccessKey.matches($0.keyHash, hash) }) { return .forbidden }
            if let adminKeyHash, AccessKey.matches(adminKeyHash, hash) { return .forbidden }
            return .unauthenticated
        }
    }

    /// Whether a key is the admin key.
    func isAdmin(_ key: String?) -> Bool {
        guard let key, let adminKeyHash else { return false }
        return AccessKey.matches(adminKeyHash, AccessKey.hash(key))
    }

    /// Registers a new app and returns its key (shown this once).
    /// - Returns: `nil` when the id is taken.
    func create(_ id: String) async throws -> String? {
        let key = AccessKey.generate()
        let app = RegisteredApp(id: id, keyHash: AccessKey.hash(key), createdAt: .now)
        return try await changes.run { [self] in
            guard lock.withLock({ known[id] == nil }), try await directory.register(app) else { return nil }
            lock.withLock { known[id] = app }
            return key
        }
    }

    /// On a shared directory, re-reads the apps another node may have created: called on a miss, at
    /// most once a second. The read is awaited with no lock held (each statement has its deadline);
    /// only the merge takes the lock.
    private func refreshShared() async {
        guard isShared, reloads.isDue() else { return }
        await readAll(failure: "reading the shared app directory failed")
    }

    /// Reads every app of the directory, awaited, and knows them; a failure is logged as `failure`.
    private func readAll(failure: String) async {
        do {
            let apps = try await directory.apps()
            lock.withLock { for app in apps { known[app.id] = app } }
        } catch {
            logger.warning("\(failure)", metadata: ["error": "\(error)"])
        }
    }

    /// On a shared directory, reads the one app this node does not know (another node may have just
    /// created it): on every miss, one row by its key, awaited with no lock held. A
    /// request for an app created on another node a moment ago is served at once.
    /// - Returns: whether the app is known now; `nil` when the directory could not be read.
    private func lookUpShared(_ id: String) async -> Bool? {
        guard isShared else { return lock.withLock { known[id] != nil } }
        do {
            let directory = directory
            let found = try await directory.app(id)
            return lock.withLock {
                if let found { known[id] = found }
                return known[id] != nil
            }
        } catch {
            logger.warning("reading the shared app directory failed", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
