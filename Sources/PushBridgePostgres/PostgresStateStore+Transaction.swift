import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

extension PostgresStateStore {
    /// What the writers of one database transaction share: the store, the app configuration's
    /// version read with the write lock (`nil` in a read, and once a writer changed the
    /// configuration), the data version read with it, and whether this node's writer lock is held.
    final class TransactionContext {
        let store: PostgresStateStore?
        var appVersion: Int64?
        let holdsWriteLock: Bool
        /// `app_version.data_version` as the write lock read it (`nil` in a read).
        private(set) var dataVersion: Int64?
        /// Whether a change was made since the write lock was taken (a write method was called).
        var hasChanges = false
        /// Rolls the transaction back and begins it again under the lock (a group commit's), for a
        /// savepoint taken before any change: see ``PostgresSavepointStore``.
        var restart: (() throws -> Void)?
        /// Whether a statement of this transaction moved the data version.
        private(set) var movedDataVersion = false
        /// A savepoint was rolled back: what the data version is after the commit is not known here.
        var versionIsUncertain = false
        /// The badge log as this transaction read it, when the node keeps none for it (a read).
        var badges: BadgeOverlay?
        /// The sent-message records of the ids a group commit named, as the write lock read them and
        /// this transaction's writes changed them (`nil` for an id without one; `nil` in all: none named,
        /// or dropped by a savepoint rolled back).
        var records: [String: StoredSentMessage?]?
        var keptApp: AppConfigurationCache? { store?.keptApp }
        /// What the node keeps between writes, while this transaction holds the write lock.
        var keptData: PostgresStateStore.KeptData? { holdsWriteLock ? store?.kept : nil }

        init(store: PostgresStateStore? = nil, appVersion: Int64? = nil, dataVersion: Int64? = nil, holdsWriteLock: Bool = false) {
            self.store = store
            self.appVersion = appVersion
            self.dataVersion = dataVersion
            self.holdsWriteLock = holdsWriteLock
        }

        /// The common table expression that moves the data version, the first time this
        /// transaction changes kept data (`nil` after: once is enough).
        func bumpingCTE() -> String? {
            guard !movedDataVersion else { return nil }
            movedDataVersion = true
            return "pushbridge_data AS (UPDATE app_version SET data_version = data_version + 1)"
        }

        /// ``bumpingCTE()`` as the `WITH` clause that starts a statement (the first of a change to
        /// users, devices, settings or members), or nothing.
        func bumping() -> String { bumpingCTE().map { "WITH \($0) " } ?? "" }

        /// A savepoint was rolled back: its statements, a data version move among them, are undone,
        /// and so may be changes already made to what the node keeps.
        func savepointRolledBack() {
            records = nil  // may hold records the savepoint's writes made
            movedDataVersion = false
            versionIsUncertain = true
            keptData?.forget()
        }

        /// Takes the versions of a transaction begun again (``restart``): nothing of the first is left.
        func renew(from fresh: TransactionContext) {
            appVersion = fresh.appVersion
            dataVersion = fresh.dataVersion
            movedDataVersion = false
            versionIsUncertain = false
            hasChanges = false
            badges = nil
            records = fresh.records
        }

        /// The data version once this transaction commits, when known.
        var committedDataVersion: Int64? {
            guard let dataVersion, !versionIsUncertain else { return nil }
            return movedDataVersion ? dataVersion + 1 : dataVersion
        }
    }

    /// The app's configuration as a write last read it, with the `app_version` it had: a send reads
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

    /// One transaction's view of the database; lives only inside ``PostgresStateStore/write(_:)`` or ``read(_:)``.
    final class Transaction: PushStateTransaction {
        let session: PostgresSession
        let writable: Bool
        /// What the writers of one database transaction share (a group commit's savepoints).
        let context: TransactionContext
        var timeZones: [String: TimeZone] = [:]
        var certificates: [Int64: Certificate]?
        /// The app's configuration as this transaction last read or wrote it.
        var appConfiguration: AppConfiguration?

        init(_ session: PostgresSession, writable: Bool, context: TransactionContext = TransactionContext()) {
            self.session = session
            self.writable = writable
            self.context = context
        }

        func checkWritable() throws {
            guard writable else { throw StoreError.changeInReadTransaction }
            context.hasChanges = true
        }

        func rows(_ query: PostgresQuery) throws -> [Cells] { try session.query(query).map(Cells.init) }

        // MARK: App configuration

        func app() throws -> AppConfiguration {
            if let appConfiguration { return appConfiguration }
            if let version = context.appVersion, let kept = context.keptApp?.app(at: version) {
                appConfiguration = kept
                return kept
            }
            let app = try readApp()
            appConfiguration = app
            if let version = context.appVersion { context.keptApp?.keep(app, at: version) }
            return app
        }

        /// The app's configuration from its tables (three statements).
        private func readApp() throws -> AppConfiguration {
            var app = AppConfiguration()
            var certificates = try certificatesByID()
            for row in try rows("SELECT certificate_id FROM app_certificates ORDER BY position") {
                let id = try row.int64(0)
                if certificates[id] == nil { certificates = try readCertificates() }  // interned by another node since
                guard let certificate = certificates[id] else {
                    throw StoreError(.unexpectedValue, "app certificate \(id) does not exist", context: "app_certificates")
                }
                app.certificates.append(certificate)
            }
            for row in try rows("SELECT \(unescaped: TemplateColumn.sql) FROM app_templates ORDER BY position") {
                app.templates.append(try row.pushTemplate())
            }
            return app
        }

        func setApp(_ app: AppConfiguration) throws {
            try checkWritable()
            // The version moves with the change; until this transaction ends no kept copy is used or made.
            context.appVersion = nil
            context.keptApp?.forget()
            try session.query("UPDATE app_version SET version = version + 1")
            defer { appConfiguration = app }
            try session.query("DELETE FROM app_certificates")
            try session.query("DELETE FROM app_templates")
            for (position, certificate) in app.certificates.enumerated() {
                let id = try certificateID(certificate)
                try session.query("INSERT INTO app_certificates (position, certificate_id) VALUES (\(position), \(id))")
            }
            for (position, template) in app.templates.enumerated() {
                try session.query(
                    "INSERT INTO app_templates (position, name, title_pattern, content_pattern) VALUES (\(position), \(template.name), \(template.titlePattern), \(template.contentPattern))"
                )
            }
        }

        /// The certificates by row id: the store's known ones (rows are interned and never changed,
        /// and a row id is never used twice), read from the table when none are known yet.
        func certificatesByID() throws -> [Int64: Certificate] {
            if let certificates { return certificates }
            if let known = context.store?.knownCertificates.withLock({ $0 }), !known.isEmpty {
                certificates = known
                return known
            }
            return try readCertificates()
        }

        /// Every certificate row, also kept by the store for the next transactions.
        @discardableResult
        func readCertificates() throws -> [Int64: Certificate] {
            var out: [Int64: Certificate] = [:]
            for row in try rows("SELECT \(unescaped: CertificateColumn.sql) FROM certificates") {
                let (id, certificate) = try row.storedCertificate()
                out[id] = certificate
            }
            certificates = out
            context.store?.knownCertificates.withLock { $0.merge(out) { _, read in read } }
            return out
        }

        /// The row id of a certificate, inserting it when new (certificates are interned, never changed).
        func certificateID(_ certificate: Certificate) throws -> Int64 {
            // No other node can intern one meanwhile: every write holds the schema's write lock. One
            // interned by another node since this node last read the table is found by reading it again.
            if let (id, _) = try certificatesByID().first(where: { $0.value == certificate }) { return id }
            if let (id, _) = try readCertificates().first(where: { $0.value == certificate }) { return id }
            let row = try rows(
                "INSERT INTO certificates (name, busi_id, bundle_id, environment) VALUES (\(certificate.name), \(certificate.busiId), \(certificate.bundleId), \(certificate.environment.rawValue)) RETURNING id"
            )
            let id = try row[0].int64(0)
            certificates?[id] = certificate
            context.store?.knownCertificates.withLock { $0[id] = certificate }
            return id
        }

        func certificate(_ id: Int64?, column: String) throws -> Certificate? {
            guard let id else { return nil }
            // A row id is never reused, so a known one is current; one this node has not seen yet
            // (another node interned it) is read with the table.
            guard let certificate = try certificatesByID()[id] ?? readCertificates()[id] else {
                throw StoreError(.unexpectedValue, "certificate \(id) does not exist", context: column)
            }
            return certificate
        }
    }
}
