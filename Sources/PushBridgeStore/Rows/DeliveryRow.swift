import PushBridgeCore

/// The `deliveries` columns a claim returns, by name, in the order every store selects them
/// (``sql``) and ``DeliveryRow/claimed()`` reads them.
package enum ClaimedDeliveryColumn: Int, CaseIterable, Sendable {
    case id, messageID, receiver, token, environment, boundAt, headers, payload, queuedAt, attempts

    /// The select (or `RETURNING`) list.
    package static let sql = allCases.map(\.columnName).joined(separator: ", ")

    /// The column's name in the `deliveries` table.
    package var columnName: String {
        switch self {
        case .id: "id"
        case .messageID: "message_id"
        case .receiver: "receiver"
        case .token: "token"
        case .environment: "environment"
        case .boundAt: "bound_at"
        case .headers: "headers"
        case .payload: "payload"
        case .queuedAt: "queued_at"
        case .attempts: "attempts"
        }
    }
}

/// The `deliveries` columns a message's delivery records are read from, by name, in the order
/// every store selects them (``sql``) and ``DeliveryRow/record()`` reads them.
package enum DeliveryRecordColumn: Int, CaseIterable, Sendable {
    case id, receiver, token, state, attempts, status, reason, updatedAt, deviceRemoved

    /// The select list.
    package static let sql = allCases.map(\.columnName).joined(separator: ", ")

    /// The column's name in the `deliveries` table.
    package var columnName: String {
        switch self {
        case .id: "id"
        case .receiver: "receiver"
        case .token: "token"
        case .state: "state"
        case .attempts: "attempts"
        case .status: "status"
        case .reason: "reason"
        case .updatedAt: "updated_at"
        case .deviceRemoved: "device_removed"
        }
    }
}

/// The `devices` columns a user's device is read from (`d` the devices table), by name, in the
/// order every store selects them (``sql``) and ``DeviceRow/device(at:certificate:)`` reads them.
package enum DeviceColumn: Int, CaseIterable, Sendable {
    case token, certificate, boundAt

    /// The select list of the devices table `d`.
    package static let sql = allCases.map { "d." + $0.columnName }.joined(separator: ", ")

    /// The column's name in the `devices` table.
    package var columnName: String {
        switch self {
        case .token: "token"
        case .certificate: "certificate_id"
        case .boundAt: "bound_at"
        }
    }
}

/// Reads an outbox row or a device into their values: the decoder both stores share.
package struct DeliveryRow<Row: StoredRow> {
    /// The row.
    package let row: Row

    /// - Parameter row: a row selected with the columns of the value read.
    package init(_ row: Row) { self.row = row }

    /// A claimed delivery, from ``ClaimedDeliveryColumn``'s columns.
    /// - Throws: ``StoreError`` `unexpected-value` for an environment or headers PushBridge did not write.
    package func claimed() throws -> OutboxDelivery {
        func column(_ c: ClaimedDeliveryColumn) -> Int { c.rawValue }
        let word = try row.string(column(.environment))
        guard let environment = APNsEnvironment(rawValue: word) else {
            throw StoreError(.unexpectedValue, "environment \"\(word)\"", context: "deliveries.environment")
        }
        return OutboxDelivery(
            id: try row.int64(column(.id)), messageID: try row.string(column(.messageID)), receiver: try row.string(column(.receiver)),
            token: try row.string(column(.token)), environment: environment, boundAt: Instant(milliseconds: try row.int64(column(.boundAt))),
            headers: try OutboxDelivery.decode(try row.bytes(column(.headers))), payload: try row.bytes(column(.payload)),
            queuedAt: Instant(milliseconds: try row.int64(column(.queuedAt))), attempts: try row.int(column(.attempts)))
    }

    /// A delivery's record, from ``DeliveryRecordColumn``'s columns.
    /// - Throws: ``StoreError`` `unexpected-value` for a state code PushBridge did not write.
    package func record() throws -> DeliveryRecord {
        func column(_ c: DeliveryRecordColumn) -> Int { c.rawValue }
        return DeliveryRecord(
            id: try row.int64(column(.id)), receiver: try row.string(column(.receiver)), token: try row.string(column(.token)),
            state: try StoredCodes.deliveryState(try row.int(column(.state))), attempts: try row.int(column(.attempts)),
            status: try row.optionalInt(column(.status)), reason: try row.optionalString(column(.reason)),
            updatedAt: Instant(milliseconds: try row.int64(column(.updatedAt))), deviceRemoved: try row.bool(column(.deviceRemoved)))
    }

    /// A device, from ``DeviceColumn``'s columns starting at `offset`; `nil` for the NULLs of a
    /// receiver without devices (an outer join), or a certificate the store no longer has.
    /// - Parameters:
    ///   - offset: the first one's column.
    ///   - certificate: the certificate a `certificate_id` names (the store's kept certificates).
    package func device(at offset: Int, certificate: (Int64) throws -> Certificate?) throws -> Device? {
        guard !row.isNull(offset + DeviceColumn.token.rawValue),
            let certificate = try certificate(try row.int64(offset + DeviceColumn.certificate.rawValue))
        else { return nil }
        return Device(
            token: try row.string(offset + DeviceColumn.token.rawValue), certificate: certificate,
            boundAt: Instant(milliseconds: try row.int64(offset + DeviceColumn.boundAt.rawValue)))
    }
}
