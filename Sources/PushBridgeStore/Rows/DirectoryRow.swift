import PushBridgeCore

/// The `apps` columns of a registered app, by name, in the order every directory selects them
/// (``StoredColumn/sql``) and ``StoredRow/registeredApp()`` reads them.
package enum RegisteredAppColumn: Int, StoredColumn, Sendable {
    case id, keyHash, createdAt


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
/// (``StoredColumn/sql``) and ``StoredRow/vendorBinding()`` reads them.
package enum VendorBindingColumn: Int, StoredColumn, Sendable {
    case app, vendor, key, account, secret, signingKey, tokenSeconds, boundAt


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

// Reading a directory's rows into their values: the decoders the SQLite and PostgreSQL directories share.
extension StoredRow {
    /// A registered app, from ``RegisteredAppColumn``'s columns.
    package func registeredApp() throws -> RegisteredApp {
        RegisteredApp(
            id: try string(RegisteredAppColumn.id.rawValue), keyHash: try bytes(RegisteredAppColumn.keyHash.rawValue),
            createdAt: Instant(milliseconds: try int64(RegisteredAppColumn.createdAt.rawValue)))
    }

    /// A vendor binding, from ``VendorBindingColumn``'s columns (a family no vendor module serves is
    /// kept and found by nothing: a newer node's binding is not an error).
    package func vendorBinding() throws -> VendorBinding {
        func column(_ c: VendorBindingColumn) -> Int { c.rawValue }
        let vendor = VendorBinding.Vendor(rawValue: try string(column(.vendor)))
        return VendorBinding(
            app: try string(column(.app)), vendor: vendor, key: try string(column(.key)), account: try string(column(.account)),
            secret: try bytes(column(.secret)), signingKey: try bytes(column(.signingKey)),
            tokenSeconds: try int64(column(.tokenSeconds)), boundAt: Instant(milliseconds: try int64(column(.boundAt))))
    }
}
