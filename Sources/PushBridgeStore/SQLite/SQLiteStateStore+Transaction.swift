import Foundation
import CSQLite
import PushBridgeCore
import PushBridgeJSON

extension SQLiteStateStore {
    /// One transaction's view of the database. Lives only inside ``SQLiteStateStore/write(_:)`` or `read(_:)`.
    final class Transaction: PushStateTransaction {
        let connection: SQLiteConnection
        let writable: Bool

        init(_ connection: SQLiteConnection, writable: Bool) {
            self.connection = connection
            self.writable = writable
        }

        func checkWritable() throws {
            guard writable else { throw StoreError.changeInReadTransaction }
        }

        // MARK: App configuration

        func app() throws -> AppConfiguration {
            if let shared = connection.sharedApp { return shared }
            var app = AppConfiguration()
            let certificates = try certificatesByID()
            let list = try connection.statement("SELECT certificate_id FROM app_certificates ORDER BY position")
            while try list.step() {
                guard let certificate = certificates[list.int64(0)] else {
                    throw StoreError(.unexpectedValue, "app certificate \(list.int64(0)) does not exist", context: "app_certificates")
                }
                app.certificates.append(certificate)
            }
            let templates = try connection.statement("SELECT \(TemplateColumn.sql) FROM app_templates ORDER BY position")
            while try templates.step() { app.templates.append(try SQLiteRow(templates).pushTemplate()) }
            connection.sharedApp = app
            return app
        }

        func setApp(_ app: AppConfiguration) throws {
            try checkWritable()
            connection.sharedApp = nil
            try connection.execute("DELETE FROM app_certificates; DELETE FROM app_templates")
            for (position, certificate) in app.certificates.enumerated() {
                let id = try certificateID(certificate)
                try connection.statement("INSERT INTO app_certificates (position, certificate_id) VALUES (?, ?)").bind(1, position).bind(2, id).run()
            }
            for (position, template) in app.templates.enumerated() {
                try connection.statement("INSERT INTO app_templates (position, name, title_pattern, content_pattern) VALUES (?, ?, ?, ?)")
                    .bind(1, position).bind(2, template.name).bind(3, template.titlePattern).bind(4, template.contentPattern).run()
            }
        }

        func certificatesByID() throws -> [Int64: Certificate] {
            if let shared = connection.sharedCertificates { return shared }
            var out: [Int64: Certificate] = [:]
            let all = try connection.statement("SELECT \(CertificateColumn.sql) FROM certificates")
            while try all.step() {
                let (id, certificate) = try SQLiteRow(all).storedCertificate()
                out[id] = certificate
            }
            connection.sharedCertificates = out
            return out
        }

        /// The row id of a certificate, inserting it when new (certificates are interned, never changed).
        func certificateID(_ certificate: Certificate) throws -> Int64 {
            if let (id, _) = try certificatesByID().first(where: { $0.value == certificate }) { return id }
            try connection.statement("INSERT INTO certificates (name, busi_id, bundle_id, environment) VALUES (?, ?, ?, ?)")
                .bind(1, certificate.name).bind(2, certificate.busiId).bind(3, certificate.bundleId).bind(4, certificate.environment.rawValue).run()
            let id = connection.lastInsertRowID
            connection.sharedCertificates?[id] = certificate
            return id
        }

        func certificate(_ id: Int64?, column: String) throws -> Certificate? {
            guard let id else { return nil }
            guard let certificate = try certificatesByID()[id] else {
                throw StoreError(.unexpectedValue, "certificate \(id) does not exist", context: column)
            }
            return certificate
        }
    }
}
