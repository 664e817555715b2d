import PushBridgeCore

/// The `certificates` columns, by name, in the order every store selects them (``sql``) and
/// ``AppRow/certificate()`` reads them.
package enum CertificateColumn: Int, CaseIterable, Sendable {
    case id, name, busiId, bundleId, environment

    /// The select list.
    package static let sql = allCases.map(\.columnName).joined(separator: ", ")

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

/// The `app_templates` columns, by name, in the order every store selects them (``sql``) and
/// ``AppRow/template()`` reads them.
package enum TemplateColumn: Int, CaseIterable, Sendable {
    case name, titlePattern, contentPattern

    /// The select list.
    package static let sql = allCases.map(\.columnName).joined(separator: ", ")

    /// The column's name in the `app_templates` table.
    package var columnName: String {
        switch self {
        case .name: "name"
        case .titlePattern: "title_pattern"
        case .contentPattern: "content_pattern"
        }
    }
}

/// Reads the app configuration's rows into the core's values: the decoder both stores share.
package struct AppRow<Row: StoredRow> {
    /// The row.
    package let row: Row

    /// - Parameter row: a row selected with the columns of the value read.
    package init(_ row: Row) { self.row = row }

    /// A certificate and its row id, from ``CertificateColumn``'s columns.
    /// - Throws: ``StoreError`` `unexpected-value` for an environment PushBridge did not write.
    package func certificate() throws -> (id: Int64, certificate: Certificate) {
        func column(_ c: CertificateColumn) -> Int { c.rawValue }
        let word = try row.string(column(.environment))
        guard let environment = APNsEnvironment(rawValue: word) else {
            throw StoreError(.unexpectedValue, "environment \"\(word)\"", context: "certificates.environment")
        }
        return (
            try row.int64(column(.id)),
            Certificate(name: try row.optionalString(column(.name)), busiId: try row.optionalString(column(.busiId)), bundleId: try row.string(column(.bundleId)), environment: environment)
        )
    }

    /// A push template, from ``TemplateColumn``'s columns.
    package func template() throws -> PushTemplate {
        PushTemplate(
            name: try row.string(TemplateColumn.name.rawValue), titlePattern: try row.optionalString(TemplateColumn.titlePattern.rawValue),
            contentPattern: try row.optionalString(TemplateColumn.contentPattern.rawValue))
    }
}
