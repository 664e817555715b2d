import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

extension PostgresStateStore {
    /// What one database transaction shares: the store, the app configuration's version read with
    /// the write lock (`nil` in a read, and once the transaction changed the configuration), the data
    /// version read with it, and whether the schema's write lock is held.
    ///
    /// A write reads and changes what the node keeps as it goes (under the store's gate; a failure
    /// drops it all); the store's own caches (the configuration, certificates) take its changes
    /// when it ends well (``storeChanges``).
    final class TransactionContext {
        /// The store's caches as the transaction began.
        struct StartingPoint {
            var app: (version: Int64, app: AppConfiguration)?
            var certificates: [Int64: Certificate]
            var published: (version: Int64, badges: BadgeOverlay)?
        }

        let store: PostgresStateStore?
        var appVersion: Int64?
        let holdsWriteLock: Bool
        let start: StartingPoint
        /// `apps.data_version` as the write lock read it (`nil` in a read).
        private(set) var dataVersion: Int64?
        /// Whether a statement of this transaction moved the data version.
        private(set) var movedDataVersion = false
        /// The badge log as this transaction read it, when the node keeps none for it (a read).
        var badges: BadgeOverlay?
        /// The sent-message records of the ids the write lock read, as this transaction's writes
        /// changed them (`nil` for an id without one; `nil` in all: none named).
        var records: [String: StoredSentMessage?]?
        /// Records sent before this (epoch ms) were pruned by this transaction.
        var prunedBefore: Int64 = .min
        /// What the store's caches take when the transaction ends well, in order.
        private(set) var storeChanges: [(PostgresStateStore) -> Void] = []
        /// What the node keeps, in a write.
        var keptData: PostgresStateStore.KeptData? { holdsWriteLock ? store?.kept : nil }

        /// A read's context.
        init(store: PostgresStateStore? = nil, start: StartingPoint = StartingPoint(certificates: [:])) {
            self.store = store
            self.start = start
            holdsWriteLock = false
        }

        /// A write's context under the write lock.
        init(store: PostgresStateStore, lock: WriteLock, start: StartingPoint) {
            self.store = store
            self.start = start
            appVersion = lock.appVersion
            dataVersion = lock.dataVersion
            records = lock.records
            holdsWriteLock = true
        }

        /// Changes what the node keeps (a write's; a read keeps nothing).
        func changeKept(_ change: (KeptData) -> Void) {
            if let kept = keptData { change(kept) }
        }

        /// Changes the store's caches when the transaction ends well.
        func changeStore(_ change: @escaping (PostgresStateStore) -> Void) { storeChanges.append(change) }

        /// The transaction ended well: the store's caches take its changes.
        func keepStoreChanges() {
            guard let store else { return }
            for change in storeChanges { change(store) }
        }

        /// The common table expression that moves the data version, the first time this
        /// transaction changes kept data (`nil` after: once is enough).
        func bumpingCTE() -> String? {
            guard !movedDataVersion else { return nil }
            movedDataVersion = true
            return "pushbridge_data AS (UPDATE apps SET data_version = data_version + 1 WHERE key = \(store?.app ?? 0))"
        }

        /// ``bumpingCTE()`` as the `WITH` clause that starts a statement (the first of a change to
        /// users, devices, settings or members), or nothing.
        func bumping() -> String { bumpingCTE().map { "WITH \($0) " } ?? "" }

        /// The data version once this transaction commits, when known.
        var committedDataVersion: Int64? {
            guard let dataVersion else { return nil }
            return movedDataVersion ? dataVersion + 1 : dataVersion
        }
    }

    /// The app's configuration as a write last read it, with the version (`apps.version`) it had: a send reads
    /// the version with its write lock (one statement it makes anyway) and the tables only when the
    /// version moved (another node, or this one, changed the configuration).
    final class AppConfigurationCache: @unchecked Sendable {
        private let lock = NSLock()
        private var kept: (version: Int64, app: AppConfiguration)?

        func app(at version: Int64) -> AppConfiguration? {
            lock.withLock { kept.flatMap { $0.version == version ? $0.app : nil } }
        }

        func keep(_ app: AppConfiguration, at version: Int64) { lock.withLock { kept = (version, app) } }

        func forget() { lock.withLock { kept = nil } }

        /// The configuration kept and its version, if any.
        var current: (version: Int64, app: AppConfiguration)? { lock.withLock { kept } }
    }

    /// A sent-message record as stored.
    struct StoredSentMessage {
        var sentAt: Int64
        var decisions: [UInt8]
    }

    /// One transaction's view of the database, every statement awaited; lives only inside one of
    /// the store's transactions.
    final class Transaction {
        let session: PostgresLease
        /// The app whose rows it reads and writes (`apps.key`).
        let app: Int32
        let writable: Bool
        /// What the transaction shares with the store (versions read, caches to change).
        let context: TransactionContext
        var timeZones: [String: TimeZone] = [:]
        var certificates: [Int64: Certificate]?
        /// The app's configuration as this transaction last read or wrote it.
        var appConfiguration: AppConfiguration?

        init(_ session: PostgresLease, app: Int32, writable: Bool, context: TransactionContext) {
            self.session = session
            self.app = app
            self.writable = writable
            self.context = context
        }

        func checkWritable() throws {
            guard writable else { throw StoreError.changeInReadTransaction }
        }

        func rows(_ query: PostgresQuery) async throws -> [Cells] { try await session.query(query).map(Cells.init) }

        // MARK: App configuration

        func app() async throws -> AppConfiguration {
            if let appConfiguration { return appConfiguration }
            if let version = context.appVersion, let kept = context.start.app, kept.version == version {
                appConfiguration = kept.app
                return kept.app
            }
            let app = try await readApp()
            appConfiguration = app
            if let version = context.appVersion { context.changeStore { $0.keptApp.keep(app, at: version) } }
            return app
        }

        /// The app's configuration from its tables (three statements).
        private func readApp() async throws -> AppConfiguration {
            var configuration = AppConfiguration()
            var certificates = try await certificatesByID()
            for row in try await rows("SELECT certificate_id FROM app_certificates WHERE app = \(app) ORDER BY position") {
                let id = try row.int64(0)
                if certificates[id] == nil { certificates = try await readCertificates() }  // interned by another node since
                guard let certificate = certificates[id] else {
                    throw StoreError(.unexpectedValue, "app certificate \(id) does not exist", context: "app_certificates")
                }
                configuration.certificates.append(certificate)
            }
            for row in try await rows("SELECT \(unescaped: TemplateColumn.sql) FROM app_templates WHERE app = \(app) ORDER BY position") {
                configuration.templates.append(try row.pushTemplate())
            }
            return configuration
        }

        func setApp(_ app: AppConfiguration) async throws {
            try checkWritable()
            // The version moves with the change; until this transaction ends no kept copy is used or made.
            context.appVersion = nil
            context.changeStore { $0.keptApp.forget() }
            let key = self.app
            try await session.query("UPDATE apps SET version = version + 1 WHERE key = \(key)")
            defer { appConfiguration = app }
            try await session.query("DELETE FROM app_certificates WHERE app = \(key)")
            try await session.query("DELETE FROM app_templates WHERE app = \(key)")
            for (position, certificate) in app.certificates.enumerated() {
                let id = try await certificateID(certificate)
                try await session.query("INSERT INTO app_certificates (app, position, certificate_id) VALUES (\(key), \(position), \(id))")
            }
            for (position, template) in app.templates.enumerated() {
                try await session.query(
                    """
                    INSERT INTO app_templates (app, position, name, title_pattern, content_pattern)
                    VALUES (\(key), \(position), \(template.name), \(template.titlePattern), \(template.contentPattern))
                    """)
            }
        }

        /// The certificates by row id: the store's known ones (rows are interned and never changed,
        /// and a row id is never used twice), read from the table when none are known yet.
        func certificatesByID() async throws -> [Int64: Certificate] {
            if let certificates { return certificates }
            if !context.start.certificates.isEmpty {
                certificates = context.start.certificates
                return context.start.certificates
            }
            return try await readCertificates()
        }

        /// Every certificate row, also kept by the store for the next transactions.
        @discardableResult
        func readCertificates() async throws -> [Int64: Certificate] {
            var out: [Int64: Certificate] = [:]
            for row in try await rows("SELECT \(unescaped: CertificateColumn.sql) FROM certificates WHERE app = \(app)") {
                let (id, certificate) = try row.storedCertificate()
                out[id] = certificate
            }
            certificates = out
            context.changeStore { $0.knownCertificates.withLock { $0.merge(out) { _, read in read } } }
            return out
        }

        /// The row id of a certificate, inserting it when new (certificates are interned, never changed).
        func certificateID(_ certificate: Certificate) async throws -> Int64 {
            // No other node can intern one meanwhile: every write holds the app's write lock. One
            // interned by another node since this node last read the table is found by reading it again.
            if let (id, _) = try await certificatesByID().first(where: { $0.value == certificate }) { return id }
            if let (id, _) = try await readCertificates().first(where: { $0.value == certificate }) { return id }
            let row = try await rows(
                """
                INSERT INTO certificates (app, name, busi_id, bundle_id, environment)
                VALUES (\(app), \(certificate.name), \(certificate.busiId), \(certificate.bundleId), \(certificate.environment.rawValue)) RETURNING id
                """)
            let id = try row[0].int64(0)
            certificates?[id] = certificate
            context.changeStore { $0.knownCertificates.withLock { $0[id] = certificate } }
            return id
        }

        func certificate(_ id: Int64?, column: String) async throws -> Certificate? {
            guard let id else { return nil }
            // A row id is never reused, so a known one is current; one this node has not seen yet
            // (another node interned it) is read with the table.
            var found = try await certificatesByID()[id]
            if found == nil { found = try await readCertificates()[id] }
            guard let certificate = found else {
                throw StoreError(.unexpectedValue, "certificate \(id) does not exist", context: column)
            }
            return certificate
        }
    }
}
