import PushBridgeCore

/// The `certificates` columns, by name, in the order every store selects them (``StoredColumn/sql``) and
/// ``StoredRow/storedCertificate()`` reads them.
package enum CertificateColumn: Int, StoredColumn, Sendable {
    case id, name, busiId, bundleId, environment


    /// The column's name in the `certificates` table.
    package var columnName: String {
        switch self {
        case .id: "id"
        case .name: "name"
        case .busiId: "busi_id"
        case .bundleId: "bundle_id"
        case .environment: "environment"
        }
    }
}

/// The `app_templates` columns, by name, in the order every store selects them (``StoredColumn/sql``) and
/// ``StoredRow/pushTemplate()`` reads them.
package enum TemplateColumn: Int, StoredColumn, Sendable {
    case name, titlePattern, contentPattern


    /// The column's name in the `app_templates` table.
    package var columnName: String {
        switch self {
        case .name: "name"
        case .titlePattern: "title_pattern"
        case .contentPattern: "content_pattern"
        }
    }
}

// Reading the app configuration's rows into the core's values: the decoders both stores share.
extension StoredRow {
    /// A certificate and its row id, from ``CertificateColumn``'s columns.
    /// - Throws: ``StoreError`` `unexpected-value` for an environment PushBridge did not write.
    package func storedCertificate() throws -> (id: Int64, certificate: Certificate) {
        func column(_ c: CertificateColumn) -> Int { c.rawValue }
        let word = try string(column(.environment))
        guard let environment = APNsEnvironment(rawValue: word) else {
            throw StoreError(.unexpectedValue, "environment \"\(word)\"", context: "certificates.environment")
        }
        return (
            try int64(column(.id)),
            Certificate(name: try optionalString(column(.name)), busiId: try optionalString(column(.busiId)), bundleId: try string(column(.bundleId)), environment: environment)
        )
    }

    /// A push template, from ``TemplateColumn``'s columns.
    package func pushTemplate() throws -> PushTemplate {
        PushTemplate(
            name: try string(TemplateColumn.name.rawValue), titlePattern: try optionalString(TemplateColumn.titlePattern.rawValue),
            contentPattern: try optionalString(TemplateColumn.contentPattern.rawValue))
    }
}
