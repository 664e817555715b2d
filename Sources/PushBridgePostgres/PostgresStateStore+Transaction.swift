import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

extension PostgresStateStore {
    /// One transaction's view of the database; lives only inside ``PostgresStateStore/write(_:)`` or ``read(_:)``.
    final class Transaction: PushStateTransaction {
        let session: PostgresSession
        let writable: Bool
        var timeZones: [String: TimeZone] = [:]
        var certificates: [Int64: Certificate]?

        init(_ session: PostgresSession, writable: Bool) {
            self.session = session
            self.writable = writable
        }

        func checkWritable() throws {
            guard writable else { throw StoreError(.readOnly, "a change inside a read transaction") }
        }

        func rows(_ query: PostgresQuery) throws -> [Cells] { try session.query(query).map(Cells.init) }

        // MARK: App configuration

        func app() throws -> AppConfiguration {
            var app = AppConfiguration()
            let certificates = try certificatesByID()
            for row in try rows("SELECT certificate_id FROM app_certificates ORDER BY position") {
                let id = try row.int64(0)
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

        func certificatesByID() throws -> [Int64: Certificate] {
            if let certificates { return certificates }
            var out: [Int64: Certificate] = [:]
            for row in try rows("SELECT \(unescaped: CertificateColumn.sql) FROM certificates") {
                let (id, certificate) = try row.storedCertificate()
                out[id] = certificate
            }
            certificates = out
            return out
        }

        /// The row id of a certificate, inserting it when new (certificates are interned, never changed).
        func certificateID(_ certificate: Certificate) throws -> Int64 {
            // No other node can intern one meanwhile: every write holds the schema's write lock.
            if let (id, _) = try certificatesByID().first(where: { $0.value == certificate }) { return id }
            let row = try rows(
                "INSERT INTO certificates (name, busi_id, bundle_id, environment) VALUES (\(certificate.name), \(certificate.busiId), \(certificate.bundleId), \(certificate.environment.rawValue)) RETURNING id"
            )
            let id = try row[0].int64(0)
            certificates?[id] = certificate
            return id
        }

        func certificate(_ id: Int64?, column: String) throws -> Certificate? {
            guard let id else { return nil }
            // The rows and the certificates come from one snapshot (or from under the write lock).
            guard let certificate = try certificatesByID()[id] else {
                throw StoreError(.unexpectedValue, "certificate \(id) does not exist", context: column)
            }
            return certificate
        }
    }
}
