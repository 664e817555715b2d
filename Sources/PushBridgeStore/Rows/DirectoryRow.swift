import PushBridgeCore

/// The `apps` columns of a registered app, by name, in the order every directory selects them
/// (``sql``) and ``DirectoryRow/app()`` reads them.
package enum RegisteredAppColumn: Int, CaseIterable, Sendable {
    case id, keyHash, createdAt

    /// The select list.
    package static let sql = allCases.map(\.columnName).joined(separator: ", ")

    /// The column's name in the `apps` table.
    package var columnName: String {
        switch self {
        case .id: "id"
        case .keyHash: "key_sha256"
        case .createdAt: "created_at"
        }
    }
}

/// The `vendor_bindings` columns of a binding, by name, in the order every directory selects them
/// (``sql``) and ``DirectoryRow/binding()`` reads them.
package enum VendorBindingColumn: Int, CaseIterable, Sendable {
    case app, vendor, key, account, secret, signingKey, tokenSeconds, boundAt

    /// The select list.
    package static let sql = allCases.map(\.columnName).joined(separator: ", ")

    /// The column's name in the `vendor_bindings` table.
    package var columnName: String {
        switch self {
        case .app: "app"
        case .vendor: "vendor"
        case .key: "key"
        case .account: "account"
        case .secret: "secret"
        case .signingKey: "signing_key"
        case .tokenSeconds: "token_seconds"
        case .boundAt: "bound_at"
        }
    }
}

/// Reads a directory's rows into their values: the decoder the SQLite and PostgreSQL directories share.
package struct DirectoryRow<Row: StoredRow> {
    /// The row.
    package let row: Row

    /// - Parameter row: a row selected with the columns of the value read.
    package init(_ row: Row) { self.row = row }

    /// A registered app, from ``RegisteredAppColumn``'s columns.
    package func app() throws -> RegisteredApp {
        RegisteredApp(
            id: try row.string(RegisteredAppColumn.id.rawValue), keyHash: try row.bytes(RegisteredAppColumn.keyHash.rawValue),
            createdAt: Instant(milliseconds: try row.int64(RegisteredAppColumn.createdAt.rawValue)))
    }

    /// A vendor binding, from ``VendorBindingColumn``'s columns; `nil` for a vendor this version does
    /// not know (a newer node's binding: skipped, not an error).
    package func binding() throws -> VendorBinding? {
        func column(_ c: VendorBindingColumn) -> Int { c.rawValue }
        guard let vendor = VendorBinding.Vendor(rawValue: try row.string(column(.vendor))) else { return nil }
        return VendorBinding(
            app: try row.string(column(.app)), vendor: vendor, key: try row.string(column(.key)), account: try row.string(column(.account)),
            secret: try row.bytes(column(.secret)), signingKey: try row.bytes(column(.signingKey)),
            tokenSeconds: try row.int64(column(.tokenSeconds)), boundAt: Instant(milliseconds: try row.int64(column(.boundAt))))
    }
}
